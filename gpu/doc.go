// Package gpu is the harness's only contact with GPUs. It holds no code itself; its subpackages
// each carry one idea:
//
//   - affinity: CPU sets, starting a child process from a pinned OS thread, checking every thread
//     of a process against the set it should run on.
//   - nvml: the NVML inventory (devices, topology, P2P, NVLink), CUDA ordinal mapping, clock
//     locking and telemetry, and a fake 8-GPU NVLink server (DGX H200). NVML is bound at run
//     time through purego, as CUDA is: no cgo, so a first build prints no C compiler warnings and
//     CGO_ENABLED=0 builds work.
//   - cuda: the CUDA driver API bound at run time through purego (no cgo, no toolkit), with PTX for
//     a spin kernel and an SM copy kernel embedded.
//   - transfer: the Engine interface that moves bytes between GPUs, registered by name like
//     database/sql drivers; transfer/fake and transfer/cudaengine are its backends.
//   - worker: one process per GPU speaking JSON lines over pipes, with crash and hang detection;
//     worker/workertest lets a test binary be its own worker processes.
//   - program: device programs of a compiled replay (per endpoint, copies waiting on end stamps
//     and reconfiguration signals in memory) and a fake device that runs them in real or virtual
//     time; program/cudaprog runs them on a GPU as CUDA stream programs.
//   - bench: the coordinator side: pinned workers for a set of GPUs (StartWorkers), IPC buffers,
//     size sweeps of copies, reading NVML through a small interface of its own (bench.NVML).
//
// Nothing here imports the model (schedules, emulator, calibrate); they consume it.
package gpu
