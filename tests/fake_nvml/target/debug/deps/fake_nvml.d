/work/main/tests/fake_nvml/target/debug/deps/fake_nvml.d: src/lib.rs

/work/main/tests/fake_nvml/target/debug/deps/libfake_nvml.so: src/lib.rs

src/lib.rs:
