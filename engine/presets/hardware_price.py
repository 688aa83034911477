"""Hardware-price presets (``presets/hardware_prices/``): what a GPU costs by the hour and
draws at most, and which batch profiles (``presets/gpu_batching``, ``presets/llm_batching``,
``presets/llm_serving``) ran on how many of them.  The file's keys are the dataclass's
fields; ``[gpus_per_profile]`` maps profile ids to GPU counts."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.domains import INSTANCE_GPUS
from .schema import PRESET_DIR, check_keys, load_folder, number, read_toml, scalars, schema

HARDWARE_PRICE_DIR = PRESET_DIR / "hardware_prices"


@dataclass(frozen=True)
class HardwarePrice:
    """A rented GPU: ``instance`` (``gpus_per_instance`` GPUs) costs
    ``instance_usd_per_hour``; one GPU draws at most ``board_power_w`` W (its datasheet's
    maximum board power, an upper bound on what it draws busy).  ``gpus_per_profile``:
    batch-profile preset id → how many of these GPUs one server of that profile uses."""

    id: str
    name: str
    source: str
    instance: str
    gpus_per_instance: int
    instance_usd_per_hour: float
    board_power_w: float
    gpus_per_profile: tuple           # ((profile id, GPUs), ...)

    @property
    def usd_per_gpu_hour(self) -> float:
        """The instance's hourly price shared evenly over its GPUs, $ per GPU-hour."""
        return self.instance_usd_per_hour / self.gpus_per_instance


def load_hardware_price(path) -> HardwarePrice:
    """Load and validate one hardware-price TOML file (``ValueError`` naming the field)."""
    data, where = read_toml(path)
    fields = tuple(schema(HardwarePrice))
    check_keys(data, fields, fields, where)
    values = scalars(HardwarePrice, data, where, {"gpus_per_instance": INSTANCE_GPUS})
    uses = data["gpus_per_profile"]
    if not isinstance(uses, dict) or not uses:
        raise ValueError(f"{where}: field 'gpus_per_profile' must map profile ids to GPU counts")
    at = f"{where} [gpus_per_profile]"
    pairs = tuple((pid, number(uses, pid, at, INSTANCE_GPUS)) for pid in uses)
    for pid, n in pairs:
        if n > values["gpus_per_instance"]:
            raise ValueError(f"{at}: field {pid!r} uses {n} GPUs, the instance has "
                             f"{values['gpus_per_instance']}")
    return HardwarePrice(**values, gpus_per_profile=pairs)


def hardware_prices(directory=HARDWARE_PRICE_DIR) -> dict[str, HardwarePrice]:
    """All hardware-price presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_hardware_price)
