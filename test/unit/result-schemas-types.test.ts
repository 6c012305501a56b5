/**
 * The enum trap is closed: the result types (lib/suite) and the run store's zod schemas
 * (lib/results/schemas.ts) are checked equal both ways at compile time, so a member added to
 * `Pooler`, `ExperimentId`, `TargetKind`, `ErrorClass` … on one side only fails `tsc --noEmit`
 * (which `npm test` runs) instead of making every stored plan or step of that kind fail to load.
 *
 * The type-level cases below are checked by tsc, not by jest: each `@ts-expect-error` line must
 * fail to compile, so if SameShape stopped telling the two sides apart, tsc would fail on the now
 * unused directive. The jest tests show why it matters at run time: the schema refuses a member it
 * does not know.
 */
import type { z } from 'zod';
import {
  plannedStepSchema,
  stepRecordSchema,
  targetDescriptorSchema,
  type Holds,
  type SameShape,
} from '../../lib/results/schemas';
import type { ExperimentId } from '../../lib/suite/catalog';
import type { PlannedStep } from '../../lib/suite/expand';
import { describeTarget, type Pooler, type TargetDescriptor } from '../../lib/suite/targets';
import type { ErrorClass, StepRecord, TargetKind } from '../../lib/suite/types';
import { stepRecordWith } from '../helpers/run-files';

type DescriptorFromSchema = z.infer<typeof targetDescriptorSchema>;
type PlannedStepFromSchema = z.infer<typeof plannedStepSchema>;
type StepRecordFromSchema = z.infer<typeof stepRecordSchema>;

// Control: the real types and schemas agree (this line compiles; the file's tests depend on it).
export type RealDescriptorAgrees = Holds<SameShape<TargetDescriptor, DescriptorFromSchema>>;
export type RealPlannedStepAgrees = Holds<SameShape<PlannedStep, PlannedStepFromSchema>>;

// A new pooler product added to `Pooler` only (lib/suite/targets.ts), its schema left alone.
type DescriptorWithNewPooler = Omit<TargetDescriptor, 'pooler'> & { readonly pooler: Pooler | 'pgcat' };
// @ts-expect-error the schema has no 'pgcat': the two-way check fails
export type NewPoolerCaught = Holds<SameShape<DescriptorWithNewPooler, DescriptorFromSchema>>;

// A new experiment added to `ExperimentId` only (lib/suite/catalog.ts).
type PlannedStepWithE7 = Omit<PlannedStep, 'experiment'> & { readonly experiment: ExperimentId | 'E7' };
// @ts-expect-error the schema has no 'E7'
export type NewExperimentCaught = Holds<SameShape<PlannedStepWithE7, PlannedStepFromSchema>>;

// A new target kind added to `TargetKind` only (the schema's enum comes from the registry's names).
type DescriptorWithNewKind = Omit<TargetDescriptor, 'kind'> & {
  readonly kind: TargetKind | 'rds-proxy-read-only';
};
// @ts-expect-error the schema has no 'rds-proxy-read-only'
export type NewKindCaught = Holds<SameShape<DescriptorWithNewKind, DescriptorFromSchema>>;

// A new error class in the type only (lib/suite/types.ts ErrorClass).
type RecordWithNewErrorClass = Omit<StepRecord, 'result'> & {
  readonly result:
    | (Omit<NonNullable<StepRecord['result']>, 'errors'> & {
        readonly errors: ReadonlyArray<{ class: ErrorClass | 'pool-timeout'; count: number; sample: string }>;
      })
    | null;
};
// @ts-expect-error the schema has no 'pool-timeout'
export type NewErrorClassCaught = Holds<SameShape<RecordWithNewErrorClass, StepRecordFromSchema>>;

// The other way: a member the schema accepts but the type does not have is caught too.
type SchemaWithExtraPooler = Omit<DescriptorFromSchema, 'pooler'> & {
  pooler: DescriptorFromSchema['pooler'] | 'pgdog';
};
// @ts-expect-error the type has no 'pgdog'
export type ExtraSchemaMemberCaught = Holds<SameShape<TargetDescriptor, SchemaWithExtraPooler>>;

// A required field on one side only.
type DescriptorWithInstance = TargetDescriptor & { readonly instance: string };
// @ts-expect-error the schema has no `instance`
export type NewRequiredFieldCaught = Holds<SameShape<DescriptorWithInstance, DescriptorFromSchema>>;

describe('result schemas and result types', () => {
  test('a descriptor of every registered kind passes its schema', () => {
    // GIVEN a descriptor built by the registry
    const descriptor = describeTarget({ kind: 'pgbouncer-transaction', name: 'pgb' }, { version: '1.25.2' });

    // WHEN / THEN it is what the schema accepts, unchanged
    expect(targetDescriptorSchema.parse(descriptor)).toEqual(descriptor);
  });

  test.each([
    ['a pooler', { pooler: 'pgcat' }, 'pooler'],
    ['a target kind', { kind: 'rds-proxy-read-only' }, 'kind'],
  ])(
    'the schema refuses %s it does not know (what the compile-time check protects)',
    (_what, change, field) => {
      // GIVEN a stored descriptor naming a member the schema lacks
      const descriptor = {
        ...describeTarget({ kind: 'pgbouncer-transaction', name: 'pgb' }, { version: '1.25.2' }),
        ...change,
      };

      // WHEN it is parsed
      const parsed = targetDescriptorSchema.safeParse(descriptor);

      // THEN it fails, naming the field
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.path).toEqual([field]);
    },
  );

  test('a step record with an error class the schema lacks is refused', () => {
    // GIVEN a step record whose result names an unknown error class
    const base = stepRecordWith({});
    const record = {
      ...base,
      result: { ...base.result, errors: [{ class: 'pool-timeout', count: 1, sample: 'x' }] },
    };

    // WHEN / THEN
    const parsed = stepRecordSchema.safeParse(record);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['result', 'errors', 0, 'class']);
  });
});
