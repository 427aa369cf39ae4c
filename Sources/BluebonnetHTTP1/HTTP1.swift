@_exported import BluebonnetCore
