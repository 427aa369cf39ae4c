import FoundationEssentials

extension DownloadResponse {
    /// Alamofire 4's `destinationURL`: where the file is, ``fileURL``.
    ///
    /// Alamofire 4 also had `temporaryURL` (where the file was before the move); Bluebonnet
    /// writes a temporary file of its own and moves it into place, and does not keep that path.
    @available(*, deprecated, renamed: "fileURL")
    public var destinationURL: URL? { fileURL }
}
