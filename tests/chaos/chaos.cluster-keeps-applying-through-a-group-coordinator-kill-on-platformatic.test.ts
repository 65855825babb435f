import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describeCoordinatorKill } from './coordinatorKill.ts';

useLeakGuard();

describeCoordinatorKill('platformatic');
