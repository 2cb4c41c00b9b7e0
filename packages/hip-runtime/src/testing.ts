/**
 * @rocke/hip-runtime/testing: test doubles. `createFakeBinding` stands in for the native addon:
 * device memory in host arrays, kernels as JavaScript functions over the packed arguments, and a
 * record of every call and launch, so code above the runtime is tested without a GPU.
 */
export type { FakeBinding, FakeBindingOptions, FakeKernel, FakeKernelContext, FakeLaunch } from './fake-binding.js';
export { createFakeBinding } from './fake-binding.js';
