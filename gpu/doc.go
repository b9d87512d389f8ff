// Package gpu is the harness's only contact with GPUs. It holds no code itself; its subpackages
// each carry one idea:
//
//   - affinity: CPU sets, starting a child process from a pinned OS thread, checking every thread
//     of a process against the set it should run on.
//   - nvml: the NVML inventory (devices, topology, P2P, NVLink), CUDA ordinal mapping, clock
//     locking and telemetry, and a fake 8-GPU NVLink server built on go-nvml's mocks.
//   - cuda: the CUDA driver API bound at run time through purego (no cgo, no toolkit), with PTX for
//     a spin kernel and an SM copy kernel embedded.
//   - transfer: the Engine interface that moves bytes between GPUs, registered by name like
//     database/sql drivers; transfer/fake and transfer/cudaengine are its backends.
//   - worker: one process per GPU speaking JSON lines over pipes, with crash and hang detection.
//   - bench: the coordinator side: two pinned workers, an IPC buffer, a size sweep of copies.
//
// Nothing here imports the model (schedules, emulator, calibrate); they consume it.
package gpu
