/**
 * What a rolling restart's events say about the kernel: Linux resets the connections queued on a
 * closed SO_REUSEPORT listener unless net.ipv4.tcp_migrate_req is 1 (lib/local/pgbouncer.ts).
 */
import { reuseportCloseBehaviour } from '../../lib/local/pgbouncer-processes';

test.each([
  ['0\n', /tcp_migrate_req = 0: connections queued on the retired listener are reset/],
  ['1\n', /tcp_migrate_req = 1: connections queued on the retired listener move to the new one/],
])('net.ipv4.tcp_migrate_req %j', (value, said) => {
  expect(reuseportCloseBehaviour(() => value)).toMatch(said);
});

test('a kernel without the switch resets them', () => {
  // GIVEN no such file (not Linux, or before 5.14)
  const read = (): string => {
    throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  };
  // THEN
  expect(reuseportCloseBehaviour(read)).toMatch(/^kernel: no net\.ipv4\.tcp_migrate_req .*are reset$/);
});
