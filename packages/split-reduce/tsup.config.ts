import { defineConfig } from 'tsup';
import { packageConfig } from '../../tools/tsup-preset.mjs';

export default defineConfig(packageConfig(import.meta.dirname));
