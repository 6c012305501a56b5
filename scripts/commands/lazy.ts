/**
 * The command modules' work, loaded when a command's action runs, not when `proxylab --help` lists
 * the commands (scripts/cli.ts; CONTRIBUTING.md "Test time"): a start pays only for what its command
 * uses. Each accessor is typed as the very module its `require` loads (test/unit/cli-lazy.test.ts).
 */
import type * as ClientsModule from '../../lib/aws/clients';
import type * as RunRequestModule from '../../lib/aws/run-request';
import type * as CollectorModule from '../../lib/collector';
import type * as ConfigModule from '../../lib/config';
import type * as LoadModule from '../../lib/config/load';
import type * as LabSourceModule from '../../lib/config/lab-source';
import type * as ScenariosModule from '../../lib/config/scenarios';
import type * as StackOutputsModule from '../../lib/config/stack-outputs';
import type * as TargetsModule from '../../lib/config/targets';
import type * as RunnerBundleModule from '../../lib/constructs/runner-bundle';
import type * as LocalPricesModule from '../../lib/cost/local-prices';
import type * as PreflightModule from '../../lib/cost/preflight';
import type * as PriceCheckModule from '../../lib/cost/price-check';
import type * as PricesModule from '../../lib/cost/pricelist/command';
import type * as RunPlanModule from '../../lib/cost/run-plan';
import type * as TargetPricesModule from '../../lib/cost/target-prices';
import type * as RunLocalModule from '../../lib/local/run-local';
import type * as AvailabilityZonesModule from '../../lib/operator/availability-zones';
import type * as BlueGreenDestroyModule from '../../lib/operator/blue-green-destroy';
import type * as DoctorModule from '../../lib/operator/doctor';
import type * as StagingKeyModule from '../../lib/operator/staging-key';
import type * as ExtendModule from '../../lib/operator/extend';
import type * as OperatorModule from '../../lib/operator/operator';
import type * as OutputsModule from '../../lib/operator/outputs';
import type * as ParametersModule from '../../lib/operator/parameters';
import type * as PoolerSourcesModule from '../../lib/operator/pooler-sources';
import type * as RecollectModule from '../../lib/operator/recollect';
import type * as RunsModule from '../../lib/operator/runs';
import type * as RunLabModule from '../../lib/operator/run-lab';
import type * as SsmModule from '../../lib/operator/ssm';
import type * as ReportModule from '../../lib/report';
import type * as CloudformationModule from '@aws-sdk/client-cloudformation';

export const clientsModule = (): typeof ClientsModule =>
  require('../../lib/aws/clients') as typeof ClientsModule;
export const runRequestModule = (): typeof RunRequestModule =>
  require('../../lib/aws/run-request') as typeof RunRequestModule;
export const collectorModule = (): typeof CollectorModule =>
  require('../../lib/collector') as typeof CollectorModule;
export const configModule = (): typeof ConfigModule => require('../../lib/config') as typeof ConfigModule;
export const loadModule = (): typeof LoadModule => require('../../lib/config/load') as typeof LoadModule;
export const labSourceModule = (): typeof LabSourceModule =>
  require('../../lib/config/lab-source') as typeof LabSourceModule;
export const scenariosModule = (): typeof ScenariosModule =>
  require('../../lib/config/scenarios') as typeof ScenariosModule;
export const stackOutputsModule = (): typeof StackOutputsModule =>
  require('../../lib/config/stack-outputs') as typeof StackOutputsModule;
export const targetsModule = (): typeof TargetsModule =>
  require('../../lib/config/targets') as typeof TargetsModule;
export const runnerBundleModule = (): typeof RunnerBundleModule =>
  require('../../lib/constructs/runner-bundle') as typeof RunnerBundleModule;
export const localPricesModule = (): typeof LocalPricesModule =>
  require('../../lib/cost/local-prices') as typeof LocalPricesModule;
export const preflightModule = (): typeof PreflightModule =>
  require('../../lib/cost/preflight') as typeof PreflightModule;
export const priceCheckModule = (): typeof PriceCheckModule =>
  require('../../lib/cost/price-check') as typeof PriceCheckModule;
export const pricesModule = (): typeof PricesModule =>
  require('../../lib/cost/pricelist/command') as typeof PricesModule;
export const runPlanModule = (): typeof RunPlanModule =>
  require('../../lib/cost/run-plan') as typeof RunPlanModule;
export const targetPricesModule = (): typeof TargetPricesModule =>
  require('../../lib/cost/target-prices') as typeof TargetPricesModule;
export const runLocalModule = (): typeof RunLocalModule =>
  require('../../lib/local/run-local') as typeof RunLocalModule;
export const availabilityZonesModule = (): typeof AvailabilityZonesModule =>
  require('../../lib/operator/availability-zones') as typeof AvailabilityZonesModule;
export const doctorModule = (): typeof DoctorModule =>
  require('../../lib/operator/doctor') as typeof DoctorModule;
export const stagingKeyModule = (): typeof StagingKeyModule =>
  require('../../lib/operator/staging-key') as typeof StagingKeyModule;
export const extendModule = (): typeof ExtendModule =>
  require('../../lib/operator/extend') as typeof ExtendModule;
export const blueGreenDestroyModule = (): typeof BlueGreenDestroyModule =>
  require('../../lib/operator/blue-green-destroy') as typeof BlueGreenDestroyModule;
export const operatorModule = (): typeof OperatorModule =>
  require('../../lib/operator/operator') as typeof OperatorModule;
export const outputsModule = (): typeof OutputsModule =>
  require('../../lib/operator/outputs') as typeof OutputsModule;
export const parametersModule = (): typeof ParametersModule =>
  require('../../lib/operator/parameters') as typeof ParametersModule;
export const poolerSourcesModule = (): typeof PoolerSourcesModule =>
  require('../../lib/operator/pooler-sources') as typeof PoolerSourcesModule;
export const recollectModule = (): typeof RecollectModule =>
  require('../../lib/operator/recollect') as typeof RecollectModule;
export const runsModule = (): typeof RunsModule => require('../../lib/operator/runs') as typeof RunsModule;
export const runLabModule = (): typeof RunLabModule =>
  require('../../lib/operator/run-lab') as typeof RunLabModule;
export const ssmModule = (): typeof SsmModule => require('../../lib/operator/ssm') as typeof SsmModule;
export const reportModule = (): typeof ReportModule => require('../../lib/report') as typeof ReportModule;
export const cloudformationModule = (): typeof CloudformationModule =>
  require('@aws-sdk/client-cloudformation') as typeof CloudformationModule;
