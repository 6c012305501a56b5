/**
 * The stand-in's one start loop (PostgreSQL, PgBouncer, PgDoorman), with fake ports and fake starts:
 * which failures move on to another port and what the errors say. The real servers on a taken port
 * are in test/integration/local-stack.test.ts.
 */
import { InfrastructureError } from '../../lib/core/errors';
import { startOnFreePort, type PortRetryPolicy, type PortStart } from '../../lib/local/port-retry';

/** Offers 20001, 20002, … and records what it was asked to avoid each time. */
function ports(): { choosePort: PortRetryPolicy['choosePort']; avoided: number[][] } {
  const avoided: number[][] = [];
  let next = 20001;
  return {
    avoided,
    choosePort: (exclude) => {
      avoided.push([...exclude].sort((a, b) => a - b));
      return Promise.resolve(next++);
    },
  };
}

function policy(over: Partial<PortRetryPolicy> = {}): PortRetryPolicy {
  return {
    server: 'Fake',
    tries: 3,
    portTaken: (failed) => /Address already in use/.test(failed),
    exclude: [5432],
    ...over,
  };
}

/** A start that answers from a list, one outcome per port it is given. */
function starts(outcomes: ReadonlyArray<PortStart<string>>): {
  start: (port: number) => Promise<PortStart<string>>;
  given: number[];
} {
  const given: number[] = [];
  return {
    given,
    start: (port) => {
      given.push(port);
      const outcome = outcomes[given.length - 1];
      if (outcome === undefined) throw new Error('started too often');
      return Promise.resolve(outcome);
    },
  };
}

test('a port taken in between (the text says so, or the start saw it) is retried on another port', async () => {
  // GIVEN a first port whose bind failed and a second answered by another process
  const p = ports();
  const s = starts([
    { failed: 'could not bind: Address already in use' },
    { failed: 'answered by another process', portTaken: true },
    { started: 'server' },
  ]);
  // WHEN
  const server = await startOnFreePort(policy({ choosePort: p.choosePort }), s.start);
  // THEN the third port started it, and no port was offered twice nor the excluded one
  expect(server).toBe('server');
  expect(s.given).toEqual([20001, 20002, 20003]);
  expect(p.avoided).toEqual([[5432], [5432, 20001], [5432, 20001, 20002]]);
});

test('another failure is not retried: the error names the server, the port and why', async () => {
  // GIVEN a start that fails for another reason
  const s = starts([{ failed: 'FATAL: data directory has wrong ownership' }, { started: 'server' }]);
  // WHEN / THEN
  const started = startOnFreePort(policy({ choosePort: ports().choosePort }), s.start);
  await expect(started).rejects.toThrow(
    new InfrastructureError('Fake did not start on port 20001: FATAL: data directory has wrong ownership'),
  );
  await expect(started).rejects.toBeInstanceOf(InfrastructureError);
  expect(s.given).toEqual([20001]);
});

test('what the start throws is passed on as it is, without a retry', async () => {
  // GIVEN a start that throws
  const given: number[] = [];
  const boom = new Error('prepared badly');
  // WHEN / THEN
  await expect(
    startOnFreePort(policy({ choosePort: ports().choosePort }), (port) => {
      given.push(port);
      return Promise.reject(boom);
    }),
  ).rejects.toBe(boom);
  expect(given).toEqual([20001]);
});

test('when every try found its port taken, the error names the tries, the ports and the last reason', async () => {
  // GIVEN only taken ports
  const s = starts([
    { failed: 'Address already in use (1)' },
    { failed: 'Address already in use (2)' },
    { failed: 'Address already in use (3)' },
  ]);
  // WHEN / THEN
  await expect(startOnFreePort(policy({ choosePort: ports().choosePort }), s.start)).rejects.toThrow(
    'Fake could not bind a free port after 3 attempts (ports 20001, 20002, 20003): Address already in use (3)',
  );
  expect(s.given).toHaveLength(3);
});
