//! A criterion measurement of the CPU time the benchmarking thread ran
//! (`/proc/thread-self/schedstat`, Linux), beside criterion's wall clock.
//!
//! On a machine whose cores are shared with other work, wall-clock time
//! includes the time the thread waited for a core; its CPU time does not.
//! The kernel updates the figure at every scheduler tick and context
//! switch, so one reading may lag by a tick; over a sample of many
//! iterations (criterion's samples last milliseconds) the lag averages
//! out. Where the file cannot be read, every reading is zero and the
//! figures say so (0 ns).

use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};

/// CPU time of the current thread, in nanoseconds.
pub struct CpuTime;

fn now_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        now_ns()
    }

    fn end(&self, start: u64) -> u64 {
        now_ns().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if ns < 1e3 {
            (1.0, "ns (cpu)")
        } else if ns < 1e6 {
            (1e-3, "µs (cpu)")
        } else if ns < 1e9 {
            (1e-6, "ms (cpu)")
        } else {
            (1e-9, "s (cpu)")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }

    fn scale_throughputs(
        &self,
        typical_ns: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (per, unit, scale) = match *throughput {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => (b as f64, "MB/s (cpu)", 1e-6),
            Throughput::Elements(e) | Throughput::ElementsAndBytes { elements: e, .. } => {
                (e as f64, "elem/s (cpu)", 1.0)
            }
            Throughput::Bits(b) => (b as f64, "Mbit/s (cpu)", 1e-6),
        };
        let _ = typical_ns;
        for v in values {
            *v = per * 1e9 / *v * scale;
        }
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
