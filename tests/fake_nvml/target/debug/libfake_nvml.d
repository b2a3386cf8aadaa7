/work/main/tests/fake_nvml/target/debug/libfake_nvml.so: /work/main/tests/fake_nvml/src/lib.rs
