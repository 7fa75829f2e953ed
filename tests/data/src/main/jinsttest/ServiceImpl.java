package jinsttest;

public class ServiceImpl implements Service {
	public ServiceImpl() {
	}

	@Override
	public String name() {
		return "impl";
	}
}
