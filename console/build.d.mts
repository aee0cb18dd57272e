/** The folder the console is built into (dist/console). */
export declare const CONSOLE_OUT: string;
/** Builds the console into dist/console; resolves to that folder. */
export declare function buildConsole(): Promise<string>;
