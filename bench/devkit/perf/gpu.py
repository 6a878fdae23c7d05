"""The GPU busy fraction, sampled through NVML (``nvidia-ml-py``, an optional dependency: ``pip install -e '.[gpu]'``)
while a block of code runs."""

from __future__ import annotations

import threading
import time

INSTALL = "install nvidia-ml-py (pip install -e '.[gpu]')"


class BusySampler:
    """``with BusySampler(device) as busy: ...`` samples NVML's utilisation (the share of time a kernel ran) of the
    CUDA device every ``interval`` seconds; ``busy.fraction`` is their mean (None when not measured, and
    ``busy.reason`` says why)."""

    def __init__(self, device: str = "cuda", interval: float = 0.1):
        self.device = device
        self.interval = interval
        self.samples: list[float] = []
        self.reason: str | None = None
        self._handle = None
        self._nvml = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _open(self) -> None:
        if not str(self.device).startswith("cuda"):
            self.reason = f"GPU busy fraction not measured: the device is {self.device}, not CUDA"
            return
        try:
            import pynvml
        except ImportError:
            self.reason = f"GPU busy fraction not measured: NVML is not available ({INSTALL})"
            return
        try:
            import torch

            index = torch.device(self.device).index or 0
            pynvml.nvmlInit()
            uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
            try:
                self._handle = pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}") if uuid else None
            except pynvml.NVMLError:
                self._handle = None
            if self._handle is None:
                self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            self._nvml = pynvml
        except Exception as err:  # noqa: BLE001 - NVML errors (driver, permissions) only disable the measurement
            self.reason = f"GPU busy fraction not measured: NVML failed ({type(err).__name__}: {err})"

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self._nvml.nvmlDeviceGetUtilizationRates(self._handle).gpu / 100.0)
            time.sleep(self.interval)

    def __enter__(self) -> BusySampler:
        self._open()
        if self._handle is not None:
            self._thread = threading.Thread(target=self._run, name="nvml", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    @property
    def fraction(self) -> float | None:
        """Mean busy fraction over the samples (None when not measured or no sample was taken)."""
        if self.reason or not self.samples:
            return None
        return sum(self.samples) / len(self.samples)
