/**
 * The service-model check of one recorded AWS SDK call: required members, enums, ranges and
 * patterns of `input` against AWS's published model of `service`'s `operation`. Run by the call
 * recorder (./recorder.ts) after every test; each string is one problem.
 */
export function modelProblems(service: string, operation: string, input: unknown): string[] {
  // filled in by the service-model check (issue 20 item 3)
  void service;
  void operation;
  void input;
  return [];
}
