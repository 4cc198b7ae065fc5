"""Files and images in the conversation: the reference a message carries, what a file is,
and where its content lives.

Modules: ``types`` (:class:`Attachment`, the kinds), ``sniffing`` (the type from the content,
image sizes), ``staging`` (an upload written as it arrives), ``blobs`` (the content by its
SHA-256, on disk), ``limits`` (how much a file and a message may carry). The metadata and the
database blob store are the store's (:mod:`agentstream.store.attachments`,
:mod:`agentstream.store.blobs`); ``POST /api/attachments`` is the server's.
"""

from agentstream.attachments.blobs import BlobStore, FileBlobs
from agentstream.attachments.limits import AttachmentLimits
from agentstream.attachments.sniffing import MAX_IMAGE_PIXELS, sniff
from agentstream.attachments.types import Attachment, AttachmentKind, kind_of

__all__ = [
    "MAX_IMAGE_PIXELS",
    "Attachment",
    "AttachmentKind",
    "AttachmentLimits",
    "BlobStore",
    "FileBlobs",
    "kind_of",
    "sniff",
]
