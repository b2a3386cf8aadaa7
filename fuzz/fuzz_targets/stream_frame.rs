#![no_main]
//! The frames of an upgraded stream (`api::stream`), read from arbitrary bytes: never a
//! panic, and each frame read writes back to bytes that read as the same frame.
use libfuzzer_sys::fuzz_target;
use slurmlet::api::stream::Frame;

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    while let Ok(Some(frame)) = Frame::read_from(&mut r) {
        let mut wire = Vec::new();
        frame.write_to(&mut wire).expect("writes to a Vec");
        let back = Frame::read_from(&mut &wire[..]).expect("reads back").expect("one frame");
        assert_eq!(back, frame);
    }
});
