/** Where the engine writes its operational lines (one line per event worth telling). */
export interface Logger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** The default: standard output and standard error. */
export const consoleLogger: Logger = {
  log: (m) => console.log(m),
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
};
