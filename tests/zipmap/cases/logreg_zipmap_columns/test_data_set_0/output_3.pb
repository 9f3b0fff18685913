B
svirginicaJPBw.?±t>”ѓ=ћ=-A<њfЮ>OH?}WЌ>Q?Е]‡>'sа>с
!?in?vЮЭ>vяџ>(ћV=}`';µjf?зД=±Р?=