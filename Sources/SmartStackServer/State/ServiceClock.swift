public import SmartStackCore

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
    public init() {}

    public func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let micros = Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
        var seconds = spec.tv_sec
        var local = tm()
        localtime_r(&seconds, &local)
        return Timestamp(microseconds: micros, utcOffsetSeconds: Int32(local.tm_gmtoff))
    }
}
