//! What `test-all` runs, stage by stage: the stages themselves (ci), the
//! QEMU suite and its LSM boots (suite), upstream's selftests on both
//! kernels (upstream), and the procps and htop clients (clients).

pub mod ci;
pub mod clients;
pub mod suite;
pub mod upstream;
