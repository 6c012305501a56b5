/**
 * Renders a CloudFormation intrinsic value (Fn::Base64 → Fn::Join …) to text, with Refs, GetAtts and
 * Fn::Sub variables replaced by shell-safe placeholders: user data as EC2 would get it, minus the
 * values only a deploy knows. Availability Zones render as zone names of a stand-in region
 * (`Fn::Select [i, Fn::GetAZs]` → `us-east-1a`, `b`, …; an instance's `AvailabilityZone` attribute →
 * `us-east-1a`), so outputs that carry zones parse as the CLI would read them.
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
    if ('Fn::Select' in obj) {
      const [index, list] = obj['Fn::Select'] as [number, unknown];
      if (list && typeof list === 'object' && 'Fn::GetAZs' in list)
        return `us-east-1${'abcdef'[index] ?? 'a'}`;
    }
    if ('Fn::GetAtt' in obj) {
      const [, attribute] = obj['Fn::GetAtt'] as string[];
      if (attribute === 'AvailabilityZone') return 'us-east-1a';
      return `PLACEHOLDER_${(obj['Fn::GetAtt'] as string[]).join('_')}`;
    }
  }
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}
