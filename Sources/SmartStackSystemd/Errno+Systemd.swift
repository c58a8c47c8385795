import SystemPackage

extension Errno {
    /// The error a libsystemd call reports: `sd_*` functions return `-errno` on failure.
    ///
    /// Call only with a negative return value.
    init(systemdReturn value: Int32) {
        self.init(rawValue: value < 0 ? -value : value)
    }

    /// The calling thread's `errno`, for the plain system calls made here.
    static var current: Errno {
        Errno(rawValue: systemErrno)
    }
}
