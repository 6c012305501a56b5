/**
 * What runSuite is given and what it tells and returns (lib/engine/run-suite.ts): its options,
 * its progress events and its result.
 */
import type { Suite } from '../suite/catalog';
import type { PlannedStep } from '../suite/expand';
import type { RunEnvironment, RunManifest, RunStatus, ScenarioVerdict, StepRecord } from '../suite/types';
import type {
  Clock,
  InfrastructureWatch,
  MetricsSampler,
  PgbenchExecutor,
  PoolControl,
  ProbeRunners,
  ResultSink,
  ServerConnectionsProbe,
  Target,
} from './ports';

export type ProgressEvent =
  | {
      readonly type: 'run-start';
      readonly runId: string;
      readonly total: number;
      readonly alreadyDone: number;
      readonly resumed: boolean;
    }
  | { readonly type: 'init-data'; readonly scale: number; readonly target: string }
  | { readonly type: 'step-skip'; readonly index: number; readonly total: number; readonly step: PlannedStep }
  | {
      readonly type: 'step-start';
      readonly index: number;
      readonly total: number;
      readonly step: PlannedStep;
      readonly elapsedSec: number;
      /** Estimated seconds left including this step; null before anything is known. */
      readonly etaSec: number | null;
      readonly note: string | null;
    }
  | {
      readonly type: 'step-end';
      readonly index: number;
      readonly total: number;
      readonly step: PlannedStep;
      readonly record: StepRecord;
      readonly elapsedSec: number;
      readonly etaSec: number | null;
    }
  | {
      /** What a probe step's runner does (the disruption it issues), while its group runs. */
      readonly type: 'probe-log';
      readonly step: PlannedStep;
      readonly line: string;
    }
  | {
      readonly type: 'scenario-end';
      readonly scenario: string;
      readonly verdicts: readonly ScenarioVerdict[];
    }
  | {
      readonly type: 'run-end';
      readonly status: RunStatus;
      readonly elapsedSec: number;
      readonly error: string | null;
    };

export interface RunSuiteOptions {
  readonly runId: string;
  readonly suite: Suite;
  readonly steps: readonly PlannedStep[];
  readonly targets: readonly Target[];
  readonly executor: PgbenchExecutor;
  readonly pool: PoolControl;
  readonly sink: ResultSink;
  readonly sampler?: MetricsSampler;
  readonly clock: Clock;
  readonly progress?: (ev: ProgressEvent) => void;
  readonly signal?: AbortSignal;
  readonly mode: RunManifest['mode'];
  readonly environment: RunEnvironment;
  /** Settings for the manifest. Never credentials. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Name of the metrics file the sampler's series go to (`metrics/<name>.json`). @default 'local' */
  readonly metricsName?: string;
  /** Run `pgbench -i` when a scenario's scale differs from the data loaded. @default true */
  readonly initData?: boolean;
  /** Seconds added to each step's planned duration for the ETA. @default 1 */
  readonly stepOverheadSec?: number;
  /** Aborts the running step when a server dies (local stack); the step is then an infrastructure error. */
  readonly infrastructure?: InfrastructureWatch;
  /** The command that resumes this run (`proxylab local --run-id … `), named when a file write fails. */
  readonly resumeCommand?: string;
  /**
   * Watches the connections held on the database around each measured step; its figures go into
   * the step's `serverConnections`. Absent: not recorded (the field is left out).
   */
  readonly serverConnections?: ServerConnectionsProbe;
  /**
   * Runners of probe steps by kind (lib/suite/probes.ts); a probe step whose kind has none is
   * recorded `not-available` with the reason.
   */
  readonly probes?: ProbeRunners;
}

export interface RunSuiteResult {
  readonly manifest: RunManifest;
  /** Every step record of the run, in plan order (including those of an earlier, resumed part). */
  readonly records: readonly StepRecord[];
  readonly scenarioVerdicts: readonly ScenarioVerdict[];
  /** true when the run completed and no step or comparison verdict is `held: false`. */
  readonly allHeld: boolean;
}
