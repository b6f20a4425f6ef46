/** Small in-process memories shared by every library: no dependencies, nothing imported from another library. */
export { BoundedMemo } from './bounded-memo';
export type { BoundedMemoOptions } from './bounded-memo';
export { deepFreeze } from './deep-freeze';
export { TextMemo } from './text-memo';
export type { TextMemoOptions } from './text-memo';
