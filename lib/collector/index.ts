/** Public API of the metrics collector (Lambda handler and `proxylab collect` call these). */
export * from './event';
export * from './collect';
export * from './plan';
export * from './fetch-cloudwatch';
export * from './fetch-pi';
export * from './writer';
export { isRetryableError, withRetry, type RetryOptions } from './retry';
export * from './catalog';
export * from './clients';
