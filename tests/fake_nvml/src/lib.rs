//! A stand-in for NVIDIA's management library (`libnvidia-ml.so.1`): the NVML functions
//! slurmlet's GPU detection calls, with `nvml.h`'s types and struct layouts, answering from
//! a JSON file instead of a driver.
//!
//! The file is named by `SLURMLET_FAKE_NVML` and read again on every call, so a test can
//! change the machine under a running daemon:
//!
//! ```json
//! {
//!   "gpus": [
//!     { "name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-…", "pci_bus_id": "00000000:07:00.0",
//!       "memory_total": 42949672960, "minor": 0,
//!       "mig": [ { "name": "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "uuid": "MIG-…",
//!                  "memory_total": 21474836480, "gi": 1, "ci": 0 } ],
//!       "memory_used": 12884901888, "utilization": 87,
//!       "processes": [ { "pid": 4242, "used_memory": 12025908428, "sm_util": 85 } ] }
//!   ],
//!   "fail": { "nvmlDeviceGetCount_v2": 999 },
//!   "hang": ["nvmlDeviceGetComputeRunningProcesses_v3"],
//!   "log": "/path/to/calls"
//! }
//! ```
//!
//! A GPU with a `mig` list is in MIG mode with those instances (in its first slots, or in
//! the slots a `slot` member gives); one without cannot be (`NVML_ERROR_NOT_SUPPORTED`).
//! An instance's `gi` and `ci` are its GPU and compute instance ids
//! (`nvmlDeviceGetGpuInstanceId`, `nvmlDeviceGetComputeInstanceId`).
//! `processes` are the GPU's compute processes (`nvmlDeviceGetComputeRunningProcesses_v3`);
//! one without `used_memory` reports it as not available; those with `sm_util` have that
//! SM utilisation (`nvmlDeviceGetProcessUtilization`). `utilization` is the GPU's own
//! (`nvmlDeviceGetUtilizationRates`).
//!
//! A GPU's health: `"lost": true` makes every call on it, and its handle by UUID, answer
//! `NVML_ERROR_GPU_IS_LOST`, as a GPU fallen off the bus does; `"xid_events": [79]` are the
//! critical XID events it raises, each delivered once to `nvmlEventSetWait_v2` (in order,
//! counted per GPU for the life of the process); `"retired_pages_pending": true` and
//! `"remapped_rows": { "pending": true, "failure": false, "uncorrected": 1 }` are what
//! `nvmlDeviceGetRetiredPagesPendingStatus` and `nvmlDeviceGetRemappedRows` answer.
//! `fail` makes the named functions answer the given NVML return code; `hang` makes the
//! named functions not return for as long as the file lists them there, as a call into a
//! driver stuck in the kernel does (looked at every 50 ms); `log` names a file
//! that gets one line per call (the function's name). Without the variable, or with a file
//! that cannot be read, initialisation answers `NVML_ERROR_DRIVER_NOT_LOADED`, as on a
//! machine whose driver is not loaded.

#![allow(non_snake_case, non_camel_case_types, clippy::missing_safety_doc)]

use serde_json::Value;
use std::ffi::{c_char, c_uint, c_ulonglong};
use std::io::Write;

/// `nvmlReturn_t`.
type nvmlReturn_t = c_uint;
const NVML_SUCCESS: nvmlReturn_t = 0;
const NVML_ERROR_UNINITIALIZED: nvmlReturn_t = 1;
const NVML_ERROR_INVALID_ARGUMENT: nvmlReturn_t = 2;
const NVML_ERROR_NOT_SUPPORTED: nvmlReturn_t = 3;
const NVML_ERROR_NOT_FOUND: nvmlReturn_t = 6;
const NVML_ERROR_INSUFFICIENT_SIZE: nvmlReturn_t = 7;
const NVML_ERROR_DRIVER_NOT_LOADED: nvmlReturn_t = 9;
const NVML_ERROR_TIMEOUT: nvmlReturn_t = 10;
const NVML_ERROR_GPU_IS_LOST: nvmlReturn_t = 15;
const NVML_ERROR_UNKNOWN: nvmlReturn_t = 999;

/// `nvmlDevice_t`: an opaque pointer; here the GPU's index plus one, and for a MIG instance
/// its slot plus one in the bits above the low 16.
type nvmlDevice_t = *mut std::ffi::c_void;

/// MIG slots per GPU (`nvmlDeviceGetMaxMigDeviceCount`), as on an A100.
const MIG_SLOTS: u64 = 7;

/// `NVML_DEVICE_MIG_ENABLE`.
const NVML_DEVICE_MIG_ENABLE: c_uint = 1;

/// The handle of GPU `index`, or of its MIG instance in `slot`.
fn handle(index: usize, slot: Option<u64>) -> nvmlDevice_t {
    ((index + 1) | slot.map_or(0, |s| (s as usize + 1) << 16)) as nvmlDevice_t
}

/// The MIG instance of `gpu` in `slot`, if any.
fn mig_in_slot(gpu: &Value, slot: u64) -> Option<&Value> {
    let instances = gpu["mig"].as_array()?;
    instances.iter().enumerate().find(|(i, m)| m["slot"].as_u64().unwrap_or(*i as u64) == slot).map(|(_, m)| m)
}

/// `nvmlPciInfo_t` (`nvmlPciInfo_st`), as `nvml.h` lays it out.
#[repr(C)]
pub struct nvmlPciInfo_t {
    busIdLegacy: [c_char; 16],
    domain: c_uint,
    bus: c_uint,
    device: c_uint,
    pciDeviceId: c_uint,
    pciSubSystemId: c_uint,
    busId: [c_char; 32],
}

/// `nvmlMemory_t`.
#[repr(C)]
pub struct nvmlMemory_t {
    total: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

/// `nvmlMemory_v2_t`.
#[repr(C)]
pub struct nvmlMemory_v2_t {
    version: c_uint,
    total: c_ulonglong,
    reserved: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

/// `nvmlProcessInfo_t` (`nvmlProcessInfo_v2_t`), what
/// `nvmlDeviceGetComputeRunningProcesses_v3` fills in.
#[repr(C)]
pub struct nvmlProcessInfo_t {
    pid: c_uint,
    usedGpuMemory: c_ulonglong,
    gpuInstanceId: c_uint,
    computeInstanceId: c_uint,
}

/// `nvmlUtilization_t`.
#[repr(C)]
pub struct nvmlUtilization_t {
    gpu: c_uint,
    memory: c_uint,
}

/// `nvmlProcessUtilizationSample_t`.
#[repr(C)]
pub struct nvmlProcessUtilizationSample_t {
    pid: c_uint,
    timeStamp: c_ulonglong,
    smUtil: c_uint,
    memUtil: c_uint,
    encUtil: c_uint,
    decUtil: c_uint,
}

/// `NVML_VALUE_NOT_AVAILABLE` as an unsigned long long.
const NVML_VALUE_NOT_AVAILABLE: c_ulonglong = c_ulonglong::MAX;

/// The machine the JSON file describes, as read now; `None` when there is none.
fn machine() -> Option<Value> {
    let path = std::env::var_os("SLURMLET_FAKE_NVML")?;
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Notes the call of `function` in the log, waits while `hang` lists it, and answers the
/// code `fail` gives it, if any.
fn called(machine: &Value, function: &str) -> Option<nvmlReturn_t> {
    if let Some(log) = machine["log"].as_str() {
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
            let _ = writeln!(f, "{function}");
        }
    }
    let hangs = |m: &Value| m["hang"].as_array().is_some_and(|list| list.iter().any(|f| f == function));
    if hangs(machine) {
        while self::machine().is_some_and(|m| hangs(&m)) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    machine["fail"][function].as_u64().map(|code| code as nvmlReturn_t)
}

/// Runs `answer` with the machine after noting the call: a missing machine is
/// `uninitialised` (the driver is not loaded), a `fail` entry answers its code.
fn with_machine(
    function: &str,
    uninitialised: nvmlReturn_t,
    answer: impl FnOnce(&Value) -> nvmlReturn_t,
) -> nvmlReturn_t {
    let Some(machine) = machine() else { return uninitialised };
    match called(&machine, function) {
        Some(code) => code,
        None => answer(&machine),
    }
}

/// The GPU or MIG instance `device` stands for, and runs `answer` with it.
fn with_gpu(function: &str, device: nvmlDevice_t, answer: impl FnOnce(&Value) -> nvmlReturn_t) -> nvmlReturn_t {
    with_machine(function, NVML_ERROR_UNINITIALIZED, |machine| {
        let index = (device as usize & 0xffff).wrapping_sub(1);
        let slot = (device as usize >> 16).checked_sub(1);
        let gpu = machine["gpus"].get(index);
        match (gpu, slot) {
            (Some(gpu), _) if gpu["lost"] == true => NVML_ERROR_GPU_IS_LOST,
            (Some(gpu), None) => answer(gpu),
            (Some(gpu), Some(slot)) => match mig_in_slot(gpu, slot as u64) {
                Some(instance) => answer(instance),
                None => NVML_ERROR_INVALID_ARGUMENT,
            },
            (None, _) => NVML_ERROR_INVALID_ARGUMENT,
        }
    })
}

/// Copies `text` with its terminating NUL into `buf` of `len` bytes.
///
/// # Safety
///
/// `buf` is null or points at `len` writable bytes, as `nvml.h` asks of the caller.
unsafe fn copy_string(text: &str, buf: *mut c_char, len: c_uint) -> nvmlReturn_t {
    if buf.is_null() {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if text.len() + 1 > len as usize {
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    // SAFETY: `buf` holds `len` bytes (our contract), and the text with its NUL fits in them
    // (checked above); a Rust string and the caller's buffer cannot overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, buf, text.len());
        *buf.add(text.len()) = 0;
    }
    NVML_SUCCESS
}

/// Copies `text` into the fixed array `field`, cut to fit with its terminating NUL.
fn fill(field: &mut [c_char], text: &str) {
    let room = field.len() - 1;
    for (slot, byte) in field.iter_mut().zip(text.bytes().take(room).chain(std::iter::repeat(0))) {
        *slot = byte as c_char;
    }
}

#[no_mangle]
pub extern "C" fn nvmlInit_v2() -> nvmlReturn_t {
    with_machine("nvmlInit_v2", NVML_ERROR_DRIVER_NOT_LOADED, |_| NVML_SUCCESS)
}

#[no_mangle]
pub extern "C" fn nvmlInitWithFlags(_flags: c_uint) -> nvmlReturn_t {
    with_machine("nvmlInitWithFlags", NVML_ERROR_DRIVER_NOT_LOADED, |_| NVML_SUCCESS)
}

#[no_mangle]
pub extern "C" fn nvmlShutdown() -> nvmlReturn_t {
    with_machine("nvmlShutdown", NVML_SUCCESS, |_| NVML_SUCCESS)
}

#[no_mangle]
pub extern "C" fn nvmlErrorString(result: nvmlReturn_t) -> *const c_char {
    let text: &'static [u8] = match result {
        NVML_SUCCESS => b"Success\0",
        NVML_ERROR_UNINITIALIZED => b"Uninitialized\0",
        NVML_ERROR_INVALID_ARGUMENT => b"Invalid Argument\0",
        NVML_ERROR_INSUFFICIENT_SIZE => b"Insufficient Size\0",
        NVML_ERROR_DRIVER_NOT_LOADED => b"Driver Not Loaded\0",
        _ => b"Unknown Error\0",
    };
    text.as_ptr() as *const c_char
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(count: *mut c_uint) -> nvmlReturn_t {
    with_machine("nvmlDeviceGetCount_v2", NVML_ERROR_UNINITIALIZED, |machine| {
        // SAFETY: `count` points at a writable c_uint, as `nvml.h` asks of the caller.
        unsafe { *count = machine["gpus"].as_array().map_or(0, Vec::len) as c_uint };
        NVML_SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(index: c_uint, device: *mut nvmlDevice_t) -> nvmlReturn_t {
    with_machine("nvmlDeviceGetHandleByIndex_v2", NVML_ERROR_UNINITIALIZED, |machine| {
        if machine["gpus"].get(index as usize).is_none() {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: `device` points at a writable handle, as `nvml.h` asks of the caller.
        unsafe { *device = handle(index as usize, None) };
        NVML_SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByUUID(uuid: *const c_char, device: *mut nvmlDevice_t) -> nvmlReturn_t {
    with_machine("nvmlDeviceGetHandleByUUID", NVML_ERROR_UNINITIALIZED, |machine| {
        if uuid.is_null() {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: a non-null `uuid` is a NUL-terminated string, as `nvml.h` asks of the caller.
        let wanted = unsafe { std::ffi::CStr::from_ptr(uuid) }.to_string_lossy();
        let gpus = machine["gpus"].as_array().map_or(&[][..], Vec::as_slice);
        match gpus.iter().position(|g| g["uuid"].as_str() == Some(&*wanted)) {
            Some(index) if gpus[index]["lost"] == true => NVML_ERROR_GPU_IS_LOST,
            Some(index) => {
                // SAFETY: `device` points at a writable handle, as `nvml.h` asks of the caller.
                unsafe { *device = handle(index, None) };
                NVML_SUCCESS
            }
            None => NVML_ERROR_NOT_FOUND,
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUUID(device: nvmlDevice_t, uuid: *mut c_char, len: c_uint) -> nvmlReturn_t {
    // SAFETY: `uuid` is null or holds `len` bytes, as `nvml.h` asks of the caller.
    with_gpu("nvmlDeviceGetUUID", device, |gpu| unsafe { copy_string(gpu["uuid"].as_str().unwrap_or(""), uuid, len) })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetName(device: nvmlDevice_t, name: *mut c_char, len: c_uint) -> nvmlReturn_t {
    // SAFETY: `name` is null or holds `len` bytes, as `nvml.h` asks of the caller.
    with_gpu("nvmlDeviceGetName", device, |gpu| unsafe { copy_string(gpu["name"].as_str().unwrap_or(""), name, len) })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(device: nvmlDevice_t, pci: *mut nvmlPciInfo_t) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetPciInfo_v3", device, |gpu| {
        let bus_id = gpu["pci_bus_id"].as_str().unwrap_or("00000000:00:00.0");
        // `DDDDDDDD:BB:DD.F`, hexadecimal.
        let parts: Vec<u32> =
            bus_id.split([':', '.']).map(|p| u32::from_str_radix(p, 16).unwrap_or(0)).chain([0; 4]).collect();
        // SAFETY: `pci` points at a writable nvmlPciInfo_t, as `nvml.h` asks of the caller, and
        // nothing else refers to it during the call.
        let pci = unsafe { &mut *pci };
        fill(&mut pci.busId, bus_id);
        fill(&mut pci.busIdLegacy, bus_id.get(4..).unwrap_or(bus_id));
        pci.domain = parts[0];
        pci.bus = parts[1];
        pci.device = parts[2];
        pci.pciDeviceId = gpu["pci_device_id"].as_u64().unwrap_or(0x20b010de) as c_uint;
        pci.pciSubSystemId = gpu["pci_subsystem_id"].as_u64().unwrap_or(0x134f10de) as c_uint;
        NVML_SUCCESS
    })
}

/// The GPU's total memory in bytes, and how much of it is used.
fn memory(gpu: &Value) -> (u64, u64) {
    (gpu["memory_total"].as_u64().unwrap_or(0), gpu["memory_used"].as_u64().unwrap_or(0))
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo(device: nvmlDevice_t, info: *mut nvmlMemory_t) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetMemoryInfo", device, |gpu| {
        let (total, used) = memory(gpu);
        // SAFETY: `info` points at a writable nvmlMemory_t, as `nvml.h` asks of the caller.
        unsafe { *info = nvmlMemory_t { total, free: total.saturating_sub(used), used } };
        NVML_SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(device: nvmlDevice_t, info: *mut nvmlMemory_v2_t) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetMemoryInfo_v2", device, |gpu| {
        let (total, used) = memory(gpu);
        // SAFETY: `info` points at an nvmlMemory_v2_t with its version set, as `nvml.h` asks
        // of the caller, and is writable.
        unsafe {
            let version = (*info).version;
            *info = nvmlMemory_v2_t { version, total, reserved: 0, free: total.saturating_sub(used), used };
        }
        NVML_SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMinorNumber(device: nvmlDevice_t, minor: *mut c_uint) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetMinorNumber", device, |gpu| match gpu["minor"].as_u64() {
        Some(m) => {
            // SAFETY: `minor` points at a writable c_uint, as `nvml.h` asks of the caller.
            unsafe { *minor = m as c_uint };
            NVML_SUCCESS
        }
        None => NVML_ERROR_UNKNOWN,
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: nvmlDevice_t,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetMigMode", device, |gpu| {
        if gpu["mig"].is_array() {
            // SAFETY: `current` and `pending` point at writable c_uints, as `nvml.h` asks of
            // the caller.
            unsafe {
                *current = NVML_DEVICE_MIG_ENABLE;
                *pending = NVML_DEVICE_MIG_ENABLE;
            }
            NVML_SUCCESS
        } else {
            NVML_ERROR_NOT_SUPPORTED
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMaxMigDeviceCount(device: nvmlDevice_t, count: *mut c_uint) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetMaxMigDeviceCount", device, |gpu| {
        if gpu["mig"].is_array() {
            // SAFETY: `count` points at a writable c_uint, as `nvml.h` asks of the caller.
            unsafe { *count = MIG_SLOTS as c_uint };
            NVML_SUCCESS
        } else {
            NVML_ERROR_NOT_SUPPORTED
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigDeviceHandleByIndex(
    device: nvmlDevice_t,
    slot: c_uint,
    instance: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    let index = (device as usize & 0xffff).wrapping_sub(1);
    with_gpu("nvmlDeviceGetMigDeviceHandleByIndex", device, |gpu| {
        if !gpu["mig"].is_array() {
            return NVML_ERROR_NOT_SUPPORTED;
        }
        match mig_in_slot(gpu, slot as u64) {
            Some(_) => {
                // SAFETY: `instance` points at a writable handle, as `nvml.h` asks of the caller.
                unsafe { *instance = handle(index, Some(slot as u64)) };
                NVML_SUCCESS
            }
            None => NVML_ERROR_NOT_FOUND,
        }
    })
}

/// A MIG instance's number `key` (`gi`, `ci`) into `id`; a whole GPU, or an instance
/// without it, has none (`NVML_ERROR_NOT_SUPPORTED`).
///
/// # Safety
///
/// `id` points at a writable c_uint, as `nvml.h` asks of the caller.
unsafe fn instance_number(function: &str, device: nvmlDevice_t, key: &str, id: *mut c_uint) -> nvmlReturn_t {
    let is_instance = (device as usize >> 16) != 0;
    with_gpu(function, device, |instance| match instance[key].as_u64().filter(|_| is_instance) {
        Some(n) => {
            // SAFETY: as this function's contract says.
            unsafe { *id = n as c_uint };
            NVML_SUCCESS
        }
        None => NVML_ERROR_NOT_SUPPORTED,
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGpuInstanceId(device: nvmlDevice_t, id: *mut c_uint) -> nvmlReturn_t {
    // SAFETY: `id` is the caller's, as `nvml.h` asks.
    unsafe { instance_number("nvmlDeviceGetGpuInstanceId", device, "gi", id) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeInstanceId(device: nvmlDevice_t, id: *mut c_uint) -> nvmlReturn_t {
    // SAFETY: `id` is the caller's, as `nvml.h` asks.
    unsafe { instance_number("nvmlDeviceGetComputeInstanceId", device, "ci", id) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v3(
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetComputeRunningProcesses_v3", device, |gpu| {
        let processes = gpu["processes"].as_array().map_or(&[][..], Vec::as_slice);
        // SAFETY: `count` points at a c_uint that holds the room at `infos` and takes the
        // number of processes, as `nvml.h` asks of the caller.
        let room = unsafe { std::mem::replace(&mut *count, processes.len() as c_uint) } as usize;
        if processes.len() > room || (infos.is_null() && !processes.is_empty()) {
            return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        for (i, p) in processes.iter().enumerate() {
            let info = nvmlProcessInfo_t {
                pid: p["pid"].as_u64().unwrap_or(0) as c_uint,
                usedGpuMemory: p["used_memory"].as_u64().unwrap_or(NVML_VALUE_NOT_AVAILABLE),
                gpuInstanceId: c_uint::MAX,
                computeInstanceId: c_uint::MAX,
            };
            // SAFETY: `infos` has room for `room` entries (the caller's word), and `i` is
            // below the number of processes, which is at most `room` (checked above).
            unsafe { *infos.add(i) = info };
        }
        NVML_SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUtilizationRates(
    device: nvmlDevice_t,
    utilization: *mut nvmlUtilization_t,
) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetUtilizationRates", device, |gpu| {
        let rates = nvmlUtilization_t { gpu: gpu["utilization"].as_u64().unwrap_or(0) as c_uint, memory: 0 };
        // SAFETY: `utilization` points at a writable nvmlUtilization_t, as `nvml.h` asks of
        // the caller.
        unsafe { *utilization = rates };
        NVML_SUCCESS
    })
}

/// One sample for each process that has an `sm_util`, stamped now (so always newer than the
/// time stamp asked from); `NVML_ERROR_NOT_FOUND` when there is none, as the driver answers.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetProcessUtilization(
    device: nvmlDevice_t,
    samples: *mut nvmlProcessUtilizationSample_t,
    count: *mut c_uint,
    _last_seen: c_ulonglong,
) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetProcessUtilization", device, |gpu| {
        let processes = gpu["processes"].as_array().map_or(&[][..], Vec::as_slice);
        let busy: Vec<&Value> = processes.iter().filter(|p| p["sm_util"].is_u64()).collect();
        if busy.is_empty() {
            return NVML_ERROR_NOT_FOUND;
        }
        // SAFETY: `count` points at a c_uint that holds the room at `samples` and takes the
        // number of samples, as `nvml.h` asks of the caller.
        let room = unsafe { std::mem::replace(&mut *count, busy.len() as c_uint) } as usize;
        if samples.is_null() || busy.len() > room {
            return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64);
        for (i, p) in busy.iter().enumerate() {
            let sample = nvmlProcessUtilizationSample_t {
                pid: p["pid"].as_u64().unwrap_or(0) as c_uint,
                timeStamp: now,
                smUtil: p["sm_util"].as_u64().unwrap_or(0) as c_uint,
                memUtil: 0,
                encUtil: 0,
                decUtil: 0,
            };
            // SAFETY: `samples` has room for `room` entries (the caller's word), and `i` is
            // below the number of samples, which is at most `room` (checked above).
            unsafe { *samples.add(i) = sample };
        }
        NVML_SUCCESS
    })
}

/// `nvmlEventData_t`.
#[repr(C)]
pub struct nvmlEventData_t {
    device: nvmlDevice_t,
    eventType: c_ulonglong,
    eventData: c_ulonglong,
    gpuInstanceId: c_uint,
    computeInstanceId: c_uint,
}

/// `nvmlEventTypeXidCriticalError`.
const XID_CRITICAL_ERROR: c_ulonglong = 8;

/// How many of each GPU's `xid_events` were delivered, by UUID.
static DELIVERED: std::sync::Mutex<Vec<(String, usize)>> = std::sync::Mutex::new(Vec::new());

#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetCreate(set: *mut *mut std::ffi::c_void) -> nvmlReturn_t {
    with_machine("nvmlEventSetCreate", NVML_ERROR_UNINITIALIZED, |_| {
        // SAFETY: `set` points at a writable handle, as `nvml.h` asks of the caller.
        unsafe { *set = std::ptr::dangling_mut::<std::ffi::c_void>() };
        NVML_SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceRegisterEvents(
    device: nvmlDevice_t,
    _types: c_ulonglong,
    _set: *mut std::ffi::c_void,
) -> nvmlReturn_t {
    with_gpu("nvmlDeviceRegisterEvents", device, |_| NVML_SUCCESS)
}

#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetFree(_set: *mut std::ffi::c_void) -> nvmlReturn_t {
    NVML_SUCCESS
}

/// The next XID event of any GPU not delivered yet; `NVML_ERROR_TIMEOUT` when there is none
/// (at once, whatever the timeout: the file is what the driver would have said by then).
#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetWait_v2(
    _set: *mut std::ffi::c_void,
    data: *mut nvmlEventData_t,
    _timeout_ms: c_uint,
) -> nvmlReturn_t {
    with_machine("nvmlEventSetWait_v2", NVML_ERROR_UNINITIALIZED, |machine| {
        let gpus = machine["gpus"].as_array().map_or(&[][..], Vec::as_slice);
        let mut delivered = DELIVERED.lock().unwrap_or_else(|e| e.into_inner());
        for (index, gpu) in gpus.iter().enumerate() {
            let uuid = gpu["uuid"].as_str().unwrap_or("").to_string();
            let events = gpu["xid_events"].as_array().map_or(&[][..], Vec::as_slice);
            let seen = match delivered.iter_mut().find(|(u, _)| *u == uuid) {
                Some((_, n)) => n,
                None => {
                    delivered.push((uuid, 0));
                    &mut delivered.last_mut().expect("just pushed").1
                }
            };
            if let Some(xid) = events.get(*seen).and_then(Value::as_u64) {
                *seen += 1;
                let event = nvmlEventData_t {
                    device: handle(index, None),
                    eventType: XID_CRITICAL_ERROR,
                    eventData: xid,
                    gpuInstanceId: 0,
                    computeInstanceId: 0,
                };
                // SAFETY: `data` points at a writable nvmlEventData_t, as `nvml.h` asks of
                // the caller.
                unsafe { *data = event };
                return NVML_SUCCESS;
            }
        }
        NVML_ERROR_TIMEOUT
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPagesPendingStatus(
    device: nvmlDevice_t,
    pending: *mut c_uint,
) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetRetiredPagesPendingStatus", device, |gpu| {
        // SAFETY: `pending` points at a writable c_uint, as `nvml.h` asks of the caller.
        unsafe { *pending = c_uint::from(gpu["retired_pages_pending"] == true) };
        NVML_SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRemappedRows(
    device: nvmlDevice_t,
    corrected: *mut c_uint,
    uncorrected: *mut c_uint,
    pending: *mut c_uint,
    failure: *mut c_uint,
) -> nvmlReturn_t {
    with_gpu("nvmlDeviceGetRemappedRows", device, |gpu| {
        let rows = &gpu["remapped_rows"];
        // SAFETY: the four point at writable c_uints, as `nvml.h` asks of the caller.
        unsafe {
            *corrected = rows["corrected"].as_u64().unwrap_or(0) as c_uint;
            *uncorrected = rows["uncorrected"].as_u64().unwrap_or(0) as c_uint;
            *pending = c_uint::from(rows["pending"] == true);
            *failure = c_uint::from(rows["failure"] == true);
        }
        NVML_SUCCESS
    })
}
