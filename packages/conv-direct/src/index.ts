declare const __PACKAGE_VERSION__: string;

/** The published version of @rocke/conv-direct. */
export const VERSION: string = __PACKAGE_VERSION__;
