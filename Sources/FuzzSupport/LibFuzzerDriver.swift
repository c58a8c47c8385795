#if canImport(Glibc)
    import Glibc
#endif

/// Runs libFuzzer's driver with a target's one-input function and returns its exit status.
///
/// SwiftPM links an executable's entry point as `<module>_main`, so a fuzz target defines that and hands over
/// here. The driver comes with `-sanitize=fuzzer`; `make fuzz` links it exported, so it is found with `dlsym`.
public func runLibFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
    _ testOneInput: @convention(c) (UnsafeRawPointer, Int) -> CInt
) -> CInt {
    typealias Driver =
        @convention(c) (
            UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
            @convention(c) (UnsafeRawPointer, Int) -> CInt
        ) -> CInt
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "LLVMFuzzerRunDriver") else {
        fatalError("LLVMFuzzerRunDriver is not exported: build with `make fuzz`")
    }
    var count = argc
    var arguments = argv
    return unsafeBitCast(symbol, to: Driver.self)(&count, &arguments, testOneInput)
}
