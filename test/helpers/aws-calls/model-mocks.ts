/**
 * The model check (./model.ts) over the calls an aws-sdk-client-mock stub received: each call's
 * client gives the serviceId (`client.config.serviceId`), its command class the operation
 * (`GetResourceMetricsCommand` → GetResourceMetrics) and its `input` what the SDK was given.
 */
import { modelProblems } from './model';

/** What this needs of an aws-sdk-client-mock `AwsStub`: its sinon calls. */
export interface MockWithCalls {
  calls(): readonly { readonly thisValue: unknown; readonly args: readonly unknown[] }[];
}

/** One recorded SDK call, as the model check reads it. */
export interface SdkCall {
  readonly service: string;
  readonly operation: string;
  readonly input: unknown;
}

/** The service, operation and input of a mocked `send(command)` call. */
export function sdkCallOf(call: { readonly thisValue: unknown; readonly args: readonly unknown[] }): SdkCall {
  const client = call.thisValue as { config?: { serviceId?: unknown } } | undefined;
  const command = call.args[0] as { input?: unknown; constructor: { name: string } } | undefined;
  const service = client?.config?.serviceId;
  if (typeof service !== 'string' || command === undefined)
    throw new Error(
      `model check: a mocked send() without a client serviceId or a command (serviceId ${String(service)})`,
    );
  return { service, operation: command.constructor.name.replace(/Command$/, ''), input: command.input };
}

/** Every model problem in the calls these mocks received (empty when all are valid). */
export function mockModelProblems(...mocks: readonly MockWithCalls[]): string[] {
  return mocks.flatMap((m) =>
    m.calls().flatMap((call) => {
      const c = sdkCallOf(call);
      return modelProblems(c.service, c.operation, c.input);
    }),
  );
}

/** Fails (naming each problem) when a call these mocks received breaks its service's model. */
export function expectModelValid(...mocks: readonly MockWithCalls[]): void {
  const problems = mockModelProblems(...mocks);
  if (problems.length > 0)
    throw new Error(`AWS calls that the service model rejects:\n  ${problems.join('\n  ')}`);
}
