module labctl/peers/go

go 1.19
