"""The discrete Fourier transforms of tenpy_ad.array_api.fft (tenpy_ad/ops/fft.py): the
three linear primitives fft_c2c, fft_r2c and fft_c2r, forward and inverse, every
normalisation, with cropping and zero padding (``n``/``s`` other than the input's)."""
import tenpy_ad.array_api as xp

from .table import REAL, Spec


SPECS = [
    Spec("fft_1d", lambda x: xp.fft.fft(x), ((6,),)),
    Spec("fft_padded", lambda x: xp.fft.fft(x, n=9, axis=0, norm="ortho"), ((5, 2),)),
    Spec("ifft_cropped", lambda x: xp.fft.ifft(x, n=4), ((2, 7),)),
    Spec("fftn_axes", lambda x: xp.fft.fftn(x, s=(3, 5), axes=(1, 0), norm="forward"),
         ((4, 4, 2),)),
    Spec("ifftn_all", lambda x: xp.fft.ifftn(x), ((3, 4),)),
    Spec("rfft_even", lambda x: xp.fft.rfft(x, n=8), ((6,),), dtypes=REAL),
    Spec("rfftn_odd", lambda x: xp.fft.rfftn(x, s=(3, 5), norm="ortho"), ((4, 4),),
         dtypes=REAL),
    Spec("irfft_even", lambda x: xp.fft.irfft(x), ((2, 5),)),
    Spec("irfft_odd", lambda x: xp.fft.irfft(x, n=7, norm="forward"), ((5,),)),
    Spec("irfftn_padded", lambda x: xp.fft.irfftn(x, s=(5, 6), norm="ortho"), ((3, 3),)),
    Spec("hfft", lambda x: xp.fft.hfft(x, n=6), ((4,),)),
    Spec("ihfft", lambda x: xp.fft.ihfft(x), ((5,),), dtypes=REAL),
]
SPECS += [
    Spec("rfftn_axes_out_of_order", lambda x: xp.fft.rfftn(x, s=(3, 4), axes=(1, 0)),
         ((3, 2),), dtypes=REAL),
    Spec("irfftn_axes_out_of_order", lambda x: xp.fft.irfftn(x, s=(2, 5, 3), axes=(0, 2, 1)),
         ((2, 2, 3),)),
]
