/work/main/tests/fake_nvml/target/debug/deps/fake_nvml-84ec2dbb12ab2ab0.d: src/lib.rs Cargo.toml

/work/main/tests/fake_nvml/target/debug/deps/libfake_nvml-84ec2dbb12ab2ab0.rmeta: src/lib.rs Cargo.toml

src/lib.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=
# env-dep:CLIPPY_CONF_DIR
