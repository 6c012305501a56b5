/** `1.25.2` ≥ `1.21`; false when the version is unknown (or not a release number). */
export function versionAtLeast(version: string | null, min: string): boolean {
  if (version === null) return false;
  const a = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim());
  const b = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(min);
  if (!a || !b) return false;
  for (let i = 1; i <= 3; i++) {
    const x = Number(a[i] ?? 0);
    const y = Number(b[i] ?? 0);
    if (x !== y) return x > y;
  }
  return true;
}
