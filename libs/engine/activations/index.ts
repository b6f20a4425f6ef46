/** Runtimes started by an emitted event or by hand: the activation events and the service that appends them. */
export { activationEvents, emittedEventActivations, eventFollowers } from './activation-events';
export type { ActivationPayload, StartedActivation } from './activation-events';
export { ActivationService } from './activations';
export type { ActivationServiceDeps, EventEmission, ManualActivationRequest } from './activations';
