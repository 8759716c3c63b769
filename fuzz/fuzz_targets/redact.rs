#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| openclaw_mcp_native_fuzz::redact(data));
