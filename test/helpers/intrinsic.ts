/**
 * Renders a CloudFormation intrinsic value (Fn::Base64 → Fn::Join …) to text, with Refs, GetAtts and
 * Fn::Sub variables replaced by shell-safe placeholders: user data as EC2 would get it, minus the
 * values only a deploy knows.
 */
export function renderIntrinsic(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if ('Fn::Base64' in obj) return renderIntrinsic(obj['Fn::Base64']);
    if ('Fn::Join' in obj) {
      const [sep, parts] = obj['Fn::Join'] as [string, unknown[]];
      return parts.map(renderIntrinsic).join(sep);
    }
    if ('Ref' in obj) return `PLACEHOLDER_${String(obj.Ref).replace(/[^A-Za-z0-9]/g, '_')}`;
    if ('Fn::Sub' in obj)
      return String(obj['Fn::Sub']).replace(
        /\$\{([^}]+)\}/g,
        (_m, name: string) => `PLACEHOLDER_${name.replace(/[^A-Za-z0-9]/g, '_')}`,
      );
    if ('Fn::GetAtt' in obj) return `PLACEHOLDER_${(obj['Fn::GetAtt'] as string[]).join('_')}`;
  }
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}
