//! Build script of mpi-core: compiles the quad-precision reduction loops (`src/op/quad.c`)
//! on x86-64, where GCC and Clang have `__float128` (stable Rust has no 128-bit float).
fn main() {
    println!("cargo:rerun-if-changed=src/op/quad.c");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        cc::Build::new().file("src/op/quad.c").opt_level(2).compile("oxmpi_quad");
    }
}
