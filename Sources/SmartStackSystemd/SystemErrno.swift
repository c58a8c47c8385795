#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The calling thread's `errno`; Glibc exposes it as a function-like macro Swift imports as a variable.
var systemErrno: Int32 {
    errno
}
