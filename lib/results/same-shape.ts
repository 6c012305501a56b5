/**
 * Compile-time proof, both ways, that each schema and the shared type it stands for describe the
 * same values: a member added to an enum of the result types (`Pooler`, `ExperimentId`,
 * `TargetKind`, `ErrorClass`, `StepStatus` …) without its schema member, or a schema member the
 * type lacks, or a required field on one side only, fails `tsc --noEmit` where the check is written
 * (./schemas.ts, ./probe-schemas.ts) — before a stored plan or step of that kind is refused on
 * load. `readonly` is not a difference (the types are read-only, zod infers mutable).
 * test/unit/result-schemas-types.test.ts shows the check fails.
 */
export type DeepReadonly<T> = T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;
/** `true` when A and B (deeply read-only) are assignable to each other, `false` otherwise. */
export type SameShape<A, B> = [DeepReadonly<A>] extends [DeepReadonly<B>]
  ? [DeepReadonly<B>] extends [DeepReadonly<A>]
    ? true
    : false
  : false;
/** Compiles only when its argument is `true`. */
export type Holds<T extends true> = T;
