import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-preset.mjs';

export default defineConfig(packageTestConfig(import.meta.dirname));
