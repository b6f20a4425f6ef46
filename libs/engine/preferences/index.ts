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
export { changeSessionPreferences, preferencesBefore, type ChangePreferencesRequest } from './preference-log';
