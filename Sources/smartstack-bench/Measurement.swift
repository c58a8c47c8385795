// smartstack-bench's clocks and memory readings.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BenchSupport
import SmartStackCore

// MARK: Clock and memory

@inline(__always)
func nanoseconds(_ clock: clockid_t) -> UInt64 {
    var spec = timespec()
    clock_gettime(clock, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
}

/// Both clocks at one moment: wall time (CLOCK_MONOTONIC, what the requirement is judged on) and this
/// thread's CPU time (CLOCK_THREAD_CPUTIME_ID, which leaves out time the thread was descheduled, so it is
/// the steadier reading on a loaded machine).
struct Instant {
    var wall: UInt64
    var cpu: UInt64

    @inline(__always)
    static func now() -> Instant {
        // CPU first and wall last on the way in, the reverse on the way out (`elapsed`), so the wall
        // interval holds no clock call and the CPU interval holds both: subtracting a nested interval
        // (a look) from an enclosing one (its batch) then also removes the nested interval's clock calls.
        let cpu = nanoseconds(CLOCK_THREAD_CPUTIME_ID)
        return Instant(wall: nanoseconds(CLOCK_MONOTONIC), cpu: cpu)
    }

    @inline(__always)
    func elapsed() -> Elapsed {
        let wall = nanoseconds(CLOCK_MONOTONIC)
        let cpu = nanoseconds(CLOCK_THREAD_CPUTIME_ID)
        return Elapsed(wall: Double(wall &- self.wall), cpu: Double(cpu &- self.cpu))
    }
}

struct Elapsed {
    var wall = 0.0
    var cpu = 0.0

    static func += (lhs: inout Elapsed, rhs: Elapsed) {
        lhs.wall += rhs.wall
        lhs.cpu += rhs.cpu
    }

    static func - (lhs: Elapsed, rhs: Elapsed) -> Elapsed { Elapsed(wall: lhs.wall - rhs.wall, cpu: lhs.cpu - rhs.cpu) }
    static func / (lhs: Elapsed, rhs: Int) -> Elapsed {
        Elapsed(wall: lhs.wall / Double(rhs), cpu: lhs.cpu / Double(rhs))
    }
}

/// Per-operation costs of a phase's batches, wall and CPU.
struct Costs {
    var batches: [Elapsed] = []

    mutating func append(_ cost: Elapsed) { batches.append(cost) }
    var wall: Double { median(batches.map(\.wall)) }
    var cpu: Double { median(batches.map(\.cpu)) }
    var wallMin: Double { batches.map(\.wall).min() ?? .nan }
    var wallMax: Double { batches.map(\.wall).max() ?? .nan }
}

/// The 1-minute load average, to show how busy the machine was.
func loadAverage() -> Double {
    var loads = [0.0, 0.0, 0.0]
    return getloadavg(&loads, 3) >= 1 ? loads[0] : .nan
}

struct MemorySample {
    /// Resident set size (VmRSS), bytes.
    var rss: Int
    /// Bytes malloc has handed out and not had back (arena + mmapped chunks).
    var heapInUse: Int
}

enum Memory {
    /// A `/proc/self/status` field in kB (`VmRSS`, `VmHWM`), as bytes.
    static func statusField(_ name: String) -> Int {
        let fd = open("/proc/self/status", O_RDONLY)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("\(name):") {
            let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
            return (Int(String(digits)) ?? -1) * 1_024
        }
        return -1
    }

    static func sample() -> MemorySample {
        MemorySample(rss: statusField("VmRSS"), heapInUse: heapInUse())
    }

    /// A glibc function the Glibc module does not import (`malloc.h`), looked up at run time.
    static func glibcFunction(_ name: String) -> UnsafeMutableRawPointer? {
        #if canImport(Glibc)
            return dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)  // RTLD_DEFAULT
        #else
            return nil
        #endif
    }

    /// Bytes malloc has handed out and not had back, from `malloc_info`'s totals: the arenas' system
    /// memory less their free chunks (fast bins and the rest), plus mmapped chunks. -1 when unavailable.
    static func heapInUse() -> Int {
        #if canImport(Glibc)
            typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
            guard let symbol = glibcFunction("malloc_info") else { return -1 }
            let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
            var buffer: UnsafeMutablePointer<CChar>?
            var size = 0
            guard let stream = open_memstream(&buffer, &size) else { return -1 }
            _ = mallocInfo(0, stream)
            fclose(stream)
            guard let buffer else { return -1 }
            defer { free(buffer) }
            let xml = String(cString: buffer)
            // The process-wide totals follow the last per-arena `</heap>`.
            guard let range = xml.ranges(of: "</heap>").last else { return -1 }
            var values: [String: Int] = [:]
            for line in xml[range.upperBound...].split(separator: "\n") {
                guard let typeStart = line.firstRange(of: "type=\""), let sizeStart = line.firstRange(of: "size=\"")
                else { continue }
                let tag = line.split(separator: " ").first.map(String.init) ?? ""
                let type = line[typeStart.upperBound...].prefix { $0 != "\"" }
                let number = line[sizeStart.upperBound...].prefix { $0 != "\"" }
                values[tag + ":" + type] = Int(number)
            }
            guard let current = values["<system:current"] else { return -1 }
            return current - (values["<total:fast"] ?? 0) - (values["<total:rest"] ?? 0) + (values["<total:mmap"] ?? 0)
        #else
            return -1
        #endif
    }

    /// Gives malloc's free pages back to the kernel so that the next run's resident size starts clean.
    static func trim() {
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = glibcFunction("malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    }
}
