public import SmartStackCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the service reads the current time: the wall clock, in the service's own time zone.
public protocol ServiceClock: Sendable {
    /// Now, with the local UTC offset (used for time-of-day signals when a client sends no time).
    func now() -> Timestamp
}

/// The system's real-time clock and local time zone.
public struct SystemServiceClock: ServiceClock {
    private let offsets = LocalOffsetCache()

    public init() {}

    public func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let micros = Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
        return Timestamp(microseconds: micros, utcOffsetSeconds: offsets.offset(at: spec.tv_sec))
    }
}

/// The local UTC offset (`localtime_r`'s `tm_gmtoff`), worked out once per second of the clock: the service reads
/// the time on every call, and `localtime_r` costs more than the rest of a cached `GetStack`. Offsets change on
/// whole seconds (DST, a new zone after `tzset`), so the answer for a second is the one for all of it.
final class LocalOffsetCache: Sendable {
    /// The second it was worked out for (high 44 bits, as seconds + 2^43) and the offset (low 20 bits, + 2^19).
    private let packed = Atomic<UInt64>(0)
    private let work: @Sendable (Int) -> Int64
    private static let offsetBits: UInt64 = 20
    private static let offsetBias: Int64 = 1 << 19
    private static let secondBias: Int64 = 1 << 43

    /// `work` gives the offset at a second (the local zone's, or a test's).
    init(work: @escaping @Sendable (Int) -> Int64 = LocalOffsetCache.localOffset) {
        self.work = work
    }

    func offset(at second: Int) -> Int32 {
        let key = UInt64(bitPattern: Int64(second) &+ Self.secondBias) << Self.offsetBits
        let cached = packed.load(ordering: .relaxed)
        if cached != 0, cached >> Self.offsetBits == key >> Self.offsetBits {
            return Int32(Int64(cached & ((1 << Self.offsetBits) - 1)) - Self.offsetBias)
        }
        let offset = work(second)
        // Offsets are within ±26 hours (±93,600 s < 2^19); anything else is not cached.
        if abs(offset) < Self.offsetBias {
            packed.store(key | UInt64(offset + Self.offsetBias), ordering: .relaxed)
        }
        return Int32(clamping: offset)
    }

    /// The local zone's offset from UTC at `second` since the epoch.
    static func localOffset(at second: Int) -> Int64 {
        var seconds = second
        var local = tm()
        // `localtime_r` reads the zone once; `tzset` reads it again when it changed (`timedatectl set-timezone`, a
        // laptop's automatic zone), so the offset follows within a second. Once per second: a `stat` at most.
        tzset()
        localtime_r(&seconds, &local)
        return Int64(local.tm_gmtoff)
    }
}
