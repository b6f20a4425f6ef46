export {
  applyPreferencesPatch,
  NO_PREFERENCES,
  normalizePreferences,
  playerOverrides,
  samePreferences,
  unknownSlotIssues,
  type PreferencesPatch,
  type SessionPreferences,
  type SlotPreference,
  type SlotPreferencePatch,
} from './session-preferences';
export {
  changeSessionPreferences,
  executionPreferences,
  preferencesBefore,
  preferencesKnown,
  type ChangePreferencesRequest,
  type PreferencesSource,
} from './preference-log';
