/**
 * The one list of Aurora PostgreSQL engine versions a lab may ask for.
 *
 * A version is here only if BOTH hold:
 *  - aws-cdk-lib 2.276 has an `AuroraPostgresEngineVersion.VER_x_y` constant for it, and
 *  - cfn-lint 1.51 knows it (E3691) and does not flag it as deprecated (W3690), i.e. AWS still
 *    lets you create a cluster on it.
 * test/cdk/engine-versions.test.ts synthesizes a cluster per entry and runs cfn-lint on it, so a
 * tool upgrade that retires a version fails the tests instead of a deploy.
 *
 * Left out on purpose: 18.x (cfn-lint 1.51 does not know it yet), the `-limitless` variants (a
 * different cluster shape), 14.14 / 15.9 / 16.5 (unknown to cfn-lint), and 14.6 (cfn-lint's data
 * still lists it, but every neighbouring 14.x minor is retired; AWS retired it with them).
 *
 * Only the constant's NAME is stored, with a type-only import: loading this file (e.g. from
 * `proxylab validate`) does not load aws-cdk-lib.
 */
import type { AuroraPostgresEngineVersion } from 'aws-cdk-lib/aws-rds';

/** Name of a `VER_…` static on `AuroraPostgresEngineVersion` (type-checked against aws-cdk-lib). */
export type CdkEngineVersionKey = Extract<keyof typeof AuroraPostgresEngineVersion, `VER_${string}`>;

export interface EngineVersionEntry {
  /** The version string a lab file uses, e.g. `"16.9"`. */
  readonly version: string;
  /** The aws-cdk-lib constant it maps to. */
  readonly cdkKey: CdkEngineVersionKey;
}

export const ACCEPTED_ENGINE_VERSIONS: readonly EngineVersionEntry[] = [
  { version: '14.13', cdkKey: 'VER_14_13' },
  { version: '14.15', cdkKey: 'VER_14_15' },
  { version: '14.17', cdkKey: 'VER_14_17' },
  { version: '14.18', cdkKey: 'VER_14_18' },
  { version: '14.19', cdkKey: 'VER_14_19' },
  { version: '14.20', cdkKey: 'VER_14_20' },
  { version: '14.22', cdkKey: 'VER_14_22' },
  { version: '15.8', cdkKey: 'VER_15_8' },
  { version: '15.10', cdkKey: 'VER_15_10' },
  { version: '15.12', cdkKey: 'VER_15_12' },
  { version: '15.13', cdkKey: 'VER_15_13' },
  { version: '15.14', cdkKey: 'VER_15_14' },
  { version: '15.15', cdkKey: 'VER_15_15' },
  { version: '15.17', cdkKey: 'VER_15_17' },
  { version: '16.4', cdkKey: 'VER_16_4' },
  { version: '16.6', cdkKey: 'VER_16_6' },
  { version: '16.8', cdkKey: 'VER_16_8' },
  { version: '16.9', cdkKey: 'VER_16_9' },
  { version: '16.10', cdkKey: 'VER_16_10' },
  { version: '16.11', cdkKey: 'VER_16_11' },
  { version: '16.13', cdkKey: 'VER_16_13' },
  { version: '17.4', cdkKey: 'VER_17_4' },
  { version: '17.5', cdkKey: 'VER_17_5' },
  { version: '17.6', cdkKey: 'VER_17_6' },
  { version: '17.7', cdkKey: 'VER_17_7' },
  { version: '17.9', cdkKey: 'VER_17_9' },
];

/** Used when a lab file gives no `aurora.engineVersion`. */
export const DEFAULT_ENGINE_VERSION = '17.9';

/**
 * Versions aws-cdk-lib still has constants for but AWS no longer lets you create (cfn-lint W3690),
 * kept so the error can say "no longer creatable" instead of "unknown". 15.6 is E1's version.
 */
export const RETIRED_ENGINE_VERSIONS: readonly string[] = [
  '11.12',
  '11.13',
  '11.14',
  '11.15',
  '11.16',
  '11.17',
  '11.18',
  '11.19',
  '11.20',
  '12.4',
  '12.7',
  '12.8',
  '12.10',
  '12.11',
  '12.12',
  '12.13',
  '12.14',
  '12.15',
  '12.16',
  '12.17',
  '12.18',
  '12.19',
  '12.20',
  '13.3',
  '13.4',
  '13.5',
  '13.6',
  '13.7',
  '13.8',
  '13.10',
  '13.11',
  '13.12',
  '13.13',
  '13.14',
  '13.15',
  '13.16',
  '13.18',
  '13.20',
  '13.21',
  '13.22',
  '14.3',
  '14.4',
  '14.5',
  '14.6',
  '14.7',
  '14.8',
  '14.9',
  '14.10',
  '14.11',
  '14.12',
  '15.2',
  '15.3',
  '15.4',
  '15.5',
  '15.6',
  '15.7',
  '16.1',
  '16.2',
  '16.3',
];

export function findEngineVersion(version: string): EngineVersionEntry | undefined {
  return ACCEPTED_ENGINE_VERSIONS.find((e) => e.version === version);
}

/** The accepted version of the same major closest at or above `version` (for error hints). */
export function closestAcceptedVersion(version: string): string | undefined {
  return closestVersionIn(ACCEPTED_ENGINE_VERSIONS, version);
}

/**
 * The version in `entries` (ascending) of the same major as `version` closest at or above it, else
 * that major's newest; undefined when `version` is not `major.minor` or its major has none.
 */
export function closestVersionIn(
  entries: readonly { readonly version: string }[],
  version: string,
): string | undefined {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return undefined;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  const sameMajor = entries.map((e) => e.version.split('.').map(Number)).filter(([maj]) => maj === major);
  const atOrAbove = sameMajor.find(([, min]) => (min ?? 0) >= minor);
  const pick = atOrAbove ?? sameMajor[sameMajor.length - 1];
  return pick ? pick.join('.') : undefined;
}
