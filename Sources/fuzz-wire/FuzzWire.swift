// libFuzzer target (a): the Varlink frame decoder, the JSON parser and writer, and the call and reply envelopes.
// Built only by `make fuzz` (with -DSMARTSTACK_FUZZ and -sanitize=fuzzer,address); see docs/fuzzing.md.
#if SMARTSTACK_FUZZ
    import FuzzSupport
    #if canImport(Glibc)
        import Glibc
    #endif
    import SmartStackProtocol

    /// SwiftPM links an executable's entry point as `<module>_main`: it hands over to libFuzzer (`runLibFuzzer`).
    @_cdecl("fuzz_wire_main")
    public func fuzzWireMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
        return runLibFuzzer(argc, argv) { start, size in fuzzWire(start, size) }
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzWire(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
        let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
        WireFuzzer.parseJSON(bytes)
        WireFuzzer.decodeFrames(bytes)
        return 0
    }

    enum WireFuzzer {
        /// The whole input as one JSON text; what parses must serialize and parse back to the same value.
        static func parseJSON(_ bytes: [UInt8]) {
            guard let value = try? JSON.parse(bytes) else { return }
            let text = JSON.serialize(value)
            guard let again = try? JSON.parse(text) else {
                fatalError("serialized JSON does not parse: \(String(decoding: text, as: UTF8.self))")
            }
            guard again == value || containsNonFinite(value) else {
                fatalError("JSON round trip changed the value: \(value) -> \(again)")
            }
        }

        /// The input as a byte stream fed to the frame decoder in pieces (the first byte sets their size); every
        /// frame is read as a call and as a reply, and a call that decodes must encode and decode back to itself.
        static func decodeFrames(_ bytes: [UInt8]) {
            guard let first = bytes.first else { return }
            let piece = Int(first % 64) + 1
            var decoder = VarlinkFrameDecoder(maxFrameSize: 4_096)
            var offset = 1
            while offset < bytes.count {
                let end = min(bytes.count, offset + piece)
                decoder.append(bytes[offset..<end])
                offset = end
                do {
                    while let frame = try decoder.next() { decode(frame) }
                } catch {
                    return
                }
            }
        }

        static func decode(_ frame: [UInt8]) {
            _ = try? VarlinkReply(frame: frame)
            guard let call = try? decodedAlike(frame).get() else { return }
            var encoded: [UInt8] = []
            call.encode(into: &encoded)
            guard encoded.last == 0, let again = try? VarlinkCall(frame: Array(encoded.dropLast())) else {
                fatalError("an encoded call does not decode: \(String(decoding: encoded, as: UTF8.self))")
            }
            guard again.method == call.method, again.oneway == call.oneway, again.more == call.more,
                again.upgrade == call.upgrade,
                again.parameters == call.parameters || containsNonFinite(.object(call.parameters))
            else { fatalError("call round trip changed it: \(call) -> \(again)") }
        }

        /// The message read as the service reads it (`VarlinkCall(bytes:)`), which must decode exactly as the general
        /// parser alone does, fast paths and all (the envelope's reader, the plain parameters `Donate` and `GetStack`
        /// read themselves): the same request, or the same error (`SmartStackRequest.summary(of:)`).
        static func decodedAlike(_ frame: [UInt8]) -> Result<VarlinkCall, VarlinkFramingError> {
            frame.withUnsafeBufferPointer { bytes in
                let fast = Result { () throws(VarlinkFramingError) in try VarlinkCall(bytes: bytes) }
                let general = Result { () throws(VarlinkFramingError) in try VarlinkCall(general: bytes) }
                let (one, other) = (SmartStackRequest.summary(of: fast), SmartStackRequest.summary(of: general))
                guard one == other else {
                    fatalError(
                        "the fast path decoded \(String(decoding: frame, as: UTF8.self)) to \(one), the general one to "
                            + other)
                }
                return fast
            }
        }

        /// Whether a value holds a double JSON cannot express (written as `null`).
        static func containsNonFinite(_ value: JSONValue) -> Bool {
            switch value {
            case .double(let number): !number.isFinite
            case .array(let values): values.contains(where: containsNonFinite)
            case .object(let object): object.contains { containsNonFinite($0.value) }
            default: false
            }
        }
    }
#else
    /// Without the fuzzing build there is nothing to run: see docs/fuzzing.md.
    @main enum FuzzWireUnavailable {
        static func main() { print("fuzz-wire is a libFuzzer target: run `make fuzz` (docs/fuzzing.md)") }
    }
#endif
