declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/pipeline. */
export const VERSION: string = __PACKAGE_VERSION__;
