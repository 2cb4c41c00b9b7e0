declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/split-reduce. */
export const VERSION: string = __PACKAGE_VERSION__;
