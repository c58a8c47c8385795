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
    /// The system's wall clock as it reads now, which `now()` may not follow at once (a step of it not yet
    /// believed): clients date their calls by it.
    func wallNow() -> Timestamp
}

extension ServiceClock {
    public func wallNow() -> Timestamp { now() }
}

/// The system's real-time clock and local time zone, steadied against steps of the wall clock (`SteadyTime`).
public struct SystemServiceClock: ServiceClock {
    private let offsets = LocalOffsetCache()
    private let steady: SteadyTimeBox

    /// `stepConfirmation`: how long, in seconds, a forward step of the wall clock must hold before the service's
    /// time follows it (0: at once).
    public init(stepConfirmation: Double = SteadyTime.defaultConfirmation) {
        steady = SteadyTimeBox(SteadyTime(confirmation: Int64(stepConfirmation * 1_000_000)))
    }

    public func now() -> Timestamp {
        let wall = Self.read(CLOCK_REALTIME)
        let boot = Self.read(CLOCK_BOOTTIME)
        let micros = steady.state.withLock { $0.time(wall: wall, boot: boot) }
        return Timestamp(microseconds: micros, utcOffsetSeconds: offsets.offset(at: Int(micros / 1_000_000)))
    }

    public func wallNow() -> Timestamp {
        let wall = Self.read(CLOCK_REALTIME)
        return Timestamp(microseconds: wall, utcOffsetSeconds: offsets.offset(at: Int(wall / 1_000_000)))
    }

    private static func read(_ clock: clockid_t) -> Int64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
    }
}

/// The steady time's state, shared by copies of the clock.
final class SteadyTimeBox: Sendable {
    let state: Mutex<SteadyTime>
    init(_ time: SteadyTime) { state = Mutex(time) }
}

/// The service's time from two readings, the wall clock (`CLOCK_REALTIME`) and the time since boot
/// (`CLOCK_BOOTTIME`, which counts suspend): the wall clock while the two agree, within `tolerance` (NTP slews the
/// wall clock by well under a millisecond a second). Across a step of the wall clock it runs on with the time since
/// boot:
///
/// - **forward** (the wall clock jumps ahead: a mistaken date, a hardware clock in local time read as UTC): believed
///   only once it has held for `confirmation` (10 minutes), then the time jumps to it. A step corrected sooner never
///   moves the service's time, so nothing it publishes, and no retention sweep, lands days ahead (the engine's time
///   never goes back, so a service that followed the step at once stayed there, its timers frozen, until the real
///   time caught up; and a sweep then dropped every donation older than the step's date minus the retention).
/// - **backward** (the wall clock jumps back: a correction): the time goes on at half speed until the wall clock
///   catches up (after twice the step), never behind it: timers keep firing, late, rather than stopping for the
///   whole step.
///
/// Never decreasing; a pure state machine (readings in, microseconds since the epoch out).
public struct SteadyTime: Sendable {
    /// How long a forward step must hold before it is believed: 10 minutes.
    public static let defaultConfirmation = 600.0
    /// How far the wall clock may stray from the time since boot before it counts as a step: 2 s.
    public static let tolerance: Int64 = 2_000_000

    let confirmation: Int64
    /// The last time given, and the reading since boot it was given at.
    private var anchor: (time: Int64, boot: Int64)?
    /// Since when (time since boot) the wall clock has been ahead of the time by more than the tolerance.
    private var aheadSince: Int64?

    public init(confirmation: Int64) {
        self.confirmation = max(0, confirmation)
    }

    /// The service's time for these readings, in microseconds.
    public mutating func time(wall: Int64, boot: Int64) -> Int64 {
        guard let anchor else {
            self.anchor = (wall, boot)
            return wall
        }
        let elapsed = max(0, boot - anchor.boot)
        let running = anchor.time + elapsed
        let gap = wall - running
        var time: Int64
        if gap > Self.tolerance, confirmation > 0 {
            // Ahead: believed once it has held for the confirmation.
            let since = aheadSince ?? boot
            aheadSince = since
            time = boot - since >= confirmation ? wall : running
        } else if gap < -Self.tolerance {
            // Behind: on at half speed until the wall clock catches up.
            aheadSince = nil
            time = max(anchor.time + elapsed / 2, wall)
        } else {
            aheadSince = nil
            time = wall
        }
        time = max(time, anchor.time)
        self.anchor = (time, boot)
        return time
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
