/** The run store's schemas live with the suite model (lib/results/schemas.ts); re-exported for the report. */
export {
  describeZodError,
  manifestSchema,
  metricsFileSchema,
  parseRunFile,
  planSchema,
  stepRecordSchema,
} from '../results/schemas';
